import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { DECODE_TIMEOUT_S, imageFormatOf, judgeReference, judgeSelfie, MAX_INPUT_PIXELS, MAX_SELFIE_SIDE_PX, MIN_DETECTION_SCORE, type SelfieRefusal } from './rules.ts';

/**
 * The face model, loaded once per face worker process (never in the API: the model costs about
 * 500 MB and every inference is CPU work). face-api's node-wasm build runs TensorFlow.js on its WASM
 * backend: the WASM files and the model weights are read from node_modules, nothing is downloaded.
 */
export type FaceEngine = {
  /** A selfie's descriptor, or why the selfie is refused. */
  selfie(image: Buffer): Promise<{ descriptor: Float32Array } | { refusal: SelfieRefusal }>;
  /** A reference photo's descriptor, or null when it does not show exactly one face (or is no image). */
  reference(image: Buffer): Promise<Float32Array | null>;
  distance(a: Float32Array, b: Float32Array): number;
};

/** A face's 68 landmarks (iBUG 300-W order: jaw 0-16, brows 17-26, nose 27-35, eyes 36-47, mouth 48-67), in the decoded image's pixels. */
export type Landmarks = readonly { x: number; y: number }[];

/**
 * The engine as a face worker makes it: the face match's calls, and a liveness frame's one face with
 * its landmarks (judged as a selfie is: exactly one face that counts, large enough), or why not.
 */
export type FrameEngine = FaceEngine & {
  frame(image: Buffer): Promise<{ descriptor: Float32Array; landmarks: Landmarks } | { refusal: SelfieRefusal }>;
};

/**
 * The part of face-api this engine uses. The package is required lazily (in createFaceEngine), so a
 * process that imports this module without making an engine (the API) never loads TensorFlow.js.
 */
type Net = { loadFromDisk(dir: string): Promise<void> };
type Found = { detection: { score: number; box: { width: number; height: number } }; landmarks: { positions: { x: number; y: number }[] }; descriptor: Float32Array };
type FaceApi = {
  tf: { tensor3d(data: Uint8Array, shape: [number, number, number], dtype: 'int32'): { dispose(): void }; setBackend(name: string): Promise<boolean>; ready(): Promise<void> };
  nets: { ssdMobilenetv1: Net; faceLandmark68Net: Net; faceRecognitionNet: Net };
  SsdMobilenetv1Options: new (o: { minConfidence: number }) => object;
  detectAllFaces(input: unknown, options: object): { withFaceLandmarks(): { withFaceDescriptors(): Promise<Found[]> } };
  euclideanDistance(a: ArrayLike<number>, b: ArrayLike<number>): number;
};

const require = createRequire(import.meta.url);

type Decoded = { data: Uint8Array; width: number; height: number };

/**
 * Decoded RGB pixels, EXIF orientation applied; null when the bytes are not a JPEG, PNG or WebP that
 * sharp reads within the pixel and time limits (rules.ts says why each).
 */
async function decode(image: Buffer, maxSide: number | null): Promise<Decoded | null> {
  // The API refuses other formats already; checked again here, where the decoder runs.
  if (imageFormatOf(image) === null) return null;
  try {
    let pipeline = sharp(image, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS }).timeout({ seconds: DECODE_TIMEOUT_S }).rotate();
    if (maxSide) pipeline = pipeline.resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true });
    const { data, info } = await pipeline.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) return null;
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  } catch {
    return null;
  }
}

export async function createFaceEngine(): Promise<FrameEngine> {
  const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js') as FaceApi;
  const wasm = require('@tensorflow/tfjs-backend-wasm') as { setWasmPaths(path: string): void };
  // The default is a CDN: point the backend at the package's own files.
  wasm.setWasmPaths(`${join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist')}/`);
  await faceapi.tf.setBackend('wasm');
  await faceapi.tf.ready();
  const models = join(dirname(require.resolve('@vladmandic/face-api/package.json')), 'model');
  await faceapi.nets.ssdMobilenetv1.loadFromDisk(models);
  await faceapi.nets.faceLandmark68Net.loadFromDisk(models);
  await faceapi.nets.faceRecognitionNet.loadFromDisk(models);
  const options = new faceapi.SsdMobilenetv1Options({ minConfidence: MIN_DETECTION_SCORE });

  const faces = async (img: Decoded) => {
    const tensor = faceapi.tf.tensor3d(img.data, [img.height, img.width, 3], 'int32');
    try {
      const found = await faceapi.detectAllFaces(tensor, options).withFaceLandmarks().withFaceDescriptors();
      return found.map((f) => ({ score: f.detection.score, width: f.detection.box.width, height: f.detection.box.height, descriptor: f.descriptor, landmarks: f.landmarks.positions.map((p) => ({ x: p.x, y: p.y })) }));
    } finally {
      tensor.dispose();
    }
  };

  return {
    async selfie(image) {
      const img = await decode(image, MAX_SELFIE_SIDE_PX);
      if (!img) return { refusal: 'selfie_unreadable' };
      const judged = judgeSelfie(await faces(img));
      return 'refusal' in judged ? judged : { descriptor: judged.face.descriptor };
    },
    async reference(image) {
      const img = await decode(image, MAX_SELFIE_SIDE_PX);
      if (!img) return null;
      return judgeReference(await faces(img))?.descriptor ?? null;
    },
    async frame(image) {
      const img = await decode(image, MAX_SELFIE_SIDE_PX);
      if (!img) return { refusal: 'selfie_unreadable' };
      const judged = judgeSelfie(await faces(img));
      return 'refusal' in judged ? judged : { descriptor: judged.face.descriptor, landmarks: judged.face.landmarks };
    },
    distance: (a, b) => faceapi.euclideanDistance(a, b),
  };
}
