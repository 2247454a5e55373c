import { useEffect, useRef, useState } from 'preact/hooks';
import { get, type Schemas } from './api.ts';

/** GET /topup/quote: the server's price of a top-up, all in kobo (its one pricing rule; the portal computes none). */
export type Quote = Schemas['TopupQuote'];

/** How long typing must pause before the price is asked (one request per pause, not per keystroke). */
export const QUOTE_DELAY_MS = 350;

type QuoteState = { quote: Quote | null; error: unknown; pending: boolean };

/**
 * The price of `units` as they are typed: asked QUOTE_DELAY_MS after the last change, an answer for
 * units since replaced never shown (a price beside other units would mislead), nothing asked for an
 * empty field. What is valid (a multiple of 100, the minimum) is the server's to say: its 400 detail is
 * the error. `priceNow` asks at once (Enter in the field).
 */
export function useQuote(units: string): QuoteState & { priceNow(): void } {
  const [state, setState] = useState<QuoteState>({ quote: null, error: null, pending: false });
  const [nudge, setNudge] = useState(0);
  const immediately = useRef(false);
  useEffect(() => {
    const asked = units.trim();
    if (asked === '') {
      setState({ quote: null, error: null, pending: false });
      return;
    }
    let live = true;
    setState({ quote: null, error: null, pending: true });
    const delay = immediately.current ? 0 : QUOTE_DELAY_MS;
    immediately.current = false;
    const timer = setTimeout(() => {
      get<Quote>(`/topup/quote?units=${encodeURIComponent(asked)}`).then(
        (quote) => live && setState({ quote, error: null, pending: false }),
        (error: unknown) => live && setState({ quote: null, error, pending: false }),
      );
    }, delay);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [units, nudge]);
  return {
    ...state,
    priceNow: () => {
      immediately.current = true;
      setNudge((n) => n + 1);
    },
  };
}
