// The capacity module's one door: who gets scarce capacity next. The identity authority's slots are
// shared between organisations (fair-share.ts), and so are the face workers' turns; the machine's CPU is
// shared between interactive lookups and background steps (background-lane.ts). The policy's numbers
// (how long a lookup counts, which connection each gate listens on) are set in authority.ts, for the
// API and worker processes alike.
export { createAuthorityAccess, startBackgroundLane } from './authority.ts';
export { createFairShare, predictedFinishMs } from './fair-share.ts';
