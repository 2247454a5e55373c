import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

/** Every failure is shown as the API's own `detail`, announced to screen readers. */
export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError || error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** A page's heading takes the focus when the page opens, so keyboard and screen-reader users land on it. */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const h = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · idverify portal`;
    h.current?.focus();
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1} ref={h}>
        {title}
      </h1>
      {children}
    </section>
  );
}

/** Loads once (and again when `deps` change); errors are kept to show. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (d) => live && setData(d),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, version]);
  return { data, error, reload: () => setVersion((v) => v + 1) };
}

/** Runs an action from a form, keeping its error and a busy flag. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

export function Field(props: { label: string; name: string; type?: string; value: string; onInput(v: string): void; required?: boolean; autocomplete?: string; hint?: string; inputMode?: string; min?: string; step?: string }) {
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value}
        required={props.required}
        autocomplete={props.autocomplete}
        inputMode={props.inputMode as never}
        min={props.min}
        step={props.step}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
      {props.hint ? (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      ) : null}
    </div>
  );
}

export function Select(props: { label: string; name: string; value: string; onChange(v: string): void; options: { value: string; label: string }[] }) {
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString('en-GB', { timeZone: 'Africa/Lagos', dateStyle: 'medium', timeStyle: 'short' }) : '';
}

/** Previous and next page of a cursor list: `cursors` is the stack of cursors that led to this page. */
export function Pager({ cursors, next, onChange }: { cursors: string[]; next: string | null | undefined; onChange(c: string[]): void }) {
  return (
    <p class="pager">
      <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => onChange(cursors.slice(0, -1))}>
        Previous page
      </button>
      <button type="button" class="secondary" disabled={!next} onClick={() => next && onChange([...cursors, next])}>
        Next page
      </button>
    </p>
  );
}
