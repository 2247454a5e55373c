import { Page } from '../ui.tsx';

export function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no such page. <a href="/portal">Back to the overview</a>.
      </p>
    </Page>
  );
}
