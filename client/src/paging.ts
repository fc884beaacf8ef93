/** What every paged answer of the API carries beside its items. */
export interface PageFrame {
  total: number;
  limit: number;
  offset: number;
}

/**
 * Every item of a paged list, each exactly once: asks page after page by offset, starting at
 * `startOffset`, and stops at an empty or short page or when the offset reaches the answer's `total`.
 * Nothing is fetched before the first `next()`; breaking out of a `for await` fetches nothing more.
 * `checkpoint` runs before every item and may throw (an abort stops the items of a page already read too).
 */
export async function* pageThrough<Page extends PageFrame, Item>(
  startOffset: number,
  fetchPage: (offset: number) => Promise<Page>,
  itemsOf: (page: Page) => readonly Item[],
  checkpoint: () => void = () => {},
): AsyncGenerator<Item, void, undefined> {
  let offset = startOffset;
  for (;;) {
    const page = await fetchPage(offset);
    const items = itemsOf(page);
    for (const item of items) {
      checkpoint();
      yield item;
    }
    offset += items.length;
    if (items.length === 0 || items.length < page.limit || offset >= page.total) return;
  }
}
