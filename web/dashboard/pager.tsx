import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

/** Cursor paging, newest first: the cursors of the pages gone through, and the buttons that move between them. */
export function usePages() {
  const [cursors, setCursors] = useState<string[]>([]);
  const Pager = ({ next }: { next: string | null | undefined }) => (
    <div class="pager">
      <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
        Newer
      </button>
      <button type="button" class="secondary" disabled={!next} onClick={() => next && setCursors([...cursors, next])}>
        Older
      </button>
    </div>
  );
  return { cursor: cursors.at(-1), first: cursors.length === 0, Pager };
}

/** A list's table under its error line: `columns` head it, `children` are its rows. */
export function ListTable({ error, testId, caption, columns, children }: { error: string | undefined; testId: string; caption: string; columns: string[]; children: ComponentChildren }) {
  return (
    <>
      <p class="error" role="alert">
        {error}
      </p>
      <div class="scroll">
        <table class="fit" data-testid={testId}>
          <caption class="sr-only">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th scope="col">{c}</th>
              ))}
            </tr>
          </thead>
          <tbody>{children}</tbody>
        </table>
      </div>
    </>
  );
}
