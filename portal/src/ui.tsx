import { createContext, type ComponentChildren, type JSX } from 'preact';
import { useContext, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { keepsAccounts, SessionContext } from './session.tsx';

/** A failure the page found itself (a field left empty, a value out of range), named by the field's `name`. */
export class FieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * The field a failure is about: the page's own check, a 422's `errors[].loc`, or a 400 whose detail
 * starts with the API's field name ("units must be ...", "low_balance_units: ..."). Only a field of
 * that name in the form is marked, so a detail that merely starts with a word marks nothing.
 */
export function fieldOf(error: unknown): string | null {
  if (error instanceof FieldError) return error.field;
  if (!(error instanceof ApiError)) return null;
  const loc = (error.body.errors as { loc?: unknown[] }[] | undefined)?.[0]?.loc;
  const last = Array.isArray(loc) ? loc.filter((x) => typeof x === 'string' && !/^\d+$/.test(x)).pop() : undefined;
  if (typeof last === 'string') return last;
  // "alert_emails.1: ..." (an item of a list) marks the list's field.
  return /^([a-z][a-z0-9_]*)(?:\.[a-z0-9_]+)*(?=:| must | is | may | has )/.exec(error.message)?.[1] ?? null;
}

/** The form whose fields a failure marks (aria-invalid) and whose message describes them. */
const FormContext = createContext<{ field: string | null; errorId: string } | null>(null);

/** Where to top up: the page for those who may, else whom to ask. */
export function TopUpHint() {
  const session = useContext(SessionContext);
  if (session && keepsAccounts(session.me)) {
    return (
      <a href="/portal/top-up" class="top-up-link">
        Top up
      </a>
    );
  }
  return <span>Ask an administrator or a finance officer of your organisation to top up.</span>;
}

/**
 * Every failure is shown as the API's own `detail` (plain words for a failed connection). The live
 * region is there before any failure and stays (rendered whether or not there is one), so that a
 * screen reader reads the text out when it appears: a region inserted together with its text often is not.
 */
export function ErrorText({ error }: { error: unknown }) {
  const form = useContext(FormContext);
  const text = !error ? '' : error instanceof Error ? error.message : String(error);
  // 402: the wallet is empty; the way out is a top-up.
  const empty = error instanceof ApiError && error.status === 402;
  return (
    <div class="live" aria-live="assertive" aria-atomic="true">
      {error ? (
        <p class="error" id={form?.errorId}>
          {text}
          {empty ? (
            <>
              {' '}
              <TopUpHint />
            </>
          ) : null}
        </p>
      ) : null}
    </div>
  );
}

/** A result, read out politely when it appears: render it always, with nothing in it until there is something to say. */
export function Notice({ children }: { children?: ComponentChildren }) {
  const said = children !== null && children !== undefined && children !== false && children !== '';
  return (
    <div class="live" aria-live="polite" aria-atomic="true">
      {said ? <p class="notice">{children}</p> : null}
    </div>
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

export type Action = ReturnType<typeof useAction>;

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

type FormProps = Omit<JSX.HTMLAttributes<HTMLFormElement>, 'onSubmit' | 'action'> & { action: Action; onSubmit(e: Event): void; children: ComponentChildren };

/**
 * A form whose failures are tied to its fields: the field a failure names is marked aria-invalid and
 * described by the message. The browser's own checks (required, min, step, type) run here rather than
 * as the browser's bubble, so that their message is shown, announced and linked the same way.
 */
export function Form({ action, onSubmit, children, ...rest }: FormProps) {
  const errorId = useId();
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const bad = [...form.elements].find((el): el is HTMLInputElement => el instanceof HTMLInputElement && !el.disabled && !el.checkValidity());
    if (bad) {
      const label = bad.labels?.[0]?.textContent?.trim() ?? bad.name;
      action.setError(new FieldError(bad.name, `${label}: ${bad.validationMessage}`));
      bad.focus();
      return;
    }
    onSubmit(e);
  };
  return (
    <FormContext.Provider value={{ field: fieldOf(action.error), errorId }}>
      <form {...rest} noValidate onSubmit={submit}>
        {children}
      </form>
    </FormContext.Provider>
  );
}

/** aria-invalid and aria-describedby for a field of the given name in the enclosing Form. */
function useInvalid(name: string, hintId: string | undefined): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string } {
  const form = useContext(FormContext);
  const invalid = form !== null && form.field === name;
  const described = [hintId, invalid ? form.errorId : undefined].filter(Boolean).join(' ');
  return { ...(invalid ? { 'aria-invalid': 'true' as const } : {}), ...(described ? { 'aria-describedby': described } : {}) };
}

export function Field(props: { label: string; name: string; type?: string; value: string; onInput(v: string): void; required?: boolean; autocomplete?: string; hint?: string; inputMode?: string; min?: string; step?: string }) {
  const id = `f-${props.name}`;
  const aria = useInvalid(props.name, props.hint ? `${id}-hint` : undefined);
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
        {...aria}
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
  const aria = useInvalid(props.name, undefined);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name} value={props.value} {...aria} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal <dialog>: the rest of the page is inert while it is open, Tab and Shift+Tab go round its own
 * controls only, Escape cancels, and the focus goes back to where it was (or to the page's heading when
 * that control is gone) once it closes.
 */
export function Modal({ labelledBy, describedBy, onCancel, children, class: className }: { labelledBy: string; describedBy?: string; onCancel(): void; children: ComponentChildren; class?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    // The first control that is not the title: for a confirmation, the safe choice (Cancel) comes first.
    (dialog.querySelector<HTMLElement>('[data-autofocus]') ?? dialog.querySelector<HTMLElement>(FOCUSABLE))?.focus();
    return () => {
      if (dialog.open) dialog.close();
      // After the caller's re-render: the control that opened it may have been replaced meanwhile.
      setTimeout(() => {
        const back = opener?.isConnected && !(opener as HTMLButtonElement).disabled ? opener : document.getElementById('page-title');
        back?.focus();
      }, 0);
    };
  }, []);
  const trap = (e: KeyboardEvent) => {
    if (e.key !== 'Tab') return;
    const controls = [...ref.current!.querySelectorAll<HTMLElement>(FOCUSABLE)];
    const first = controls[0];
    const last = controls[controls.length - 1];
    if (!first || !last) return;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };
  return (
    <dialog
      ref={ref}
      class={className ? `modal ${className}` : 'modal'}
      aria-labelledby={labelledBy}
      aria-describedby={describedBy}
      onKeyDown={trap}
      onCancel={(e) => {
        // Escape: closed by our own state, so the dialog and the page agree.
        e.preventDefault();
        onCancel();
      }}
    >
      {children}
    </dialog>
  );
}

export type ConfirmOptions = { title: string; body: ComponentChildren; confirm: string };

/**
 * Asks before a change that cannot be taken back (revoke, disable, a role change, delete):
 * `await confirm.ask({...})` is true only when the person chose the confirming button.
 */
export function useConfirm() {
  const [open, setOpen] = useState<(ConfirmOptions & { resolve(ok: boolean): void }) | null>(null);
  const ask = (o: ConfirmOptions) => new Promise<boolean>((resolve) => setOpen({ ...o, resolve }));
  const close = (ok: boolean) => {
    open?.resolve(ok);
    setOpen(null);
  };
  const dialog = open ? <ConfirmDialog {...open} onClose={close} /> : null;
  return { ask, dialog };
}

function ConfirmDialog({ title, body, confirm, onClose }: ConfirmOptions & { onClose(ok: boolean): void }) {
  const titleId = useId();
  const bodyId = useId();
  return (
    <Modal labelledBy={titleId} describedBy={bodyId} onCancel={() => onClose(false)}>
      <h2 id={titleId}>{title}</h2>
      <div id={bodyId}>{body}</div>
      <p class="actions">
        <button type="button" class="secondary" data-autofocus onClick={() => onClose(false)}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={() => onClose(true)}>
          {confirm}
        </button>
      </p>
    </Modal>
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

/**
 * A value the API shows only once (a signing secret, a link's URL), with a copy button and a way to
 * dismiss it: `children` says what it is, `what` names it in the copy button and the copy failure.
 */
export function ShownOnce({ value, what, onDone, children }: { value: string; what: string; onDone(): void; children: ComponentChildren }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = () =>
    navigator.clipboard.writeText(value).then(
      () => setCopied('Copied to the clipboard.'),
      () => setCopied(`The browser refused to copy: select the ${what} and copy it yourself.`),
    );
  return (
    <div class="notice secret" role="status">
      {children}
      <p class="actions">
        <button type="button" class="secondary" onClick={() => void copy()}>
          Copy {what}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          I have copied it
        </button>
      </p>
      <p aria-live="polite">{copied}</p>
    </div>
  );
}
