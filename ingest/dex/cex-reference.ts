/**
 * The CEX book as a reference for the DEX depth search (depth-search.ts
 * ReferenceBook): executable VWAPs walked through the latest book the same
 * ingest process holds, with the taker fee. A book older than `maxAgeMs`
 * is no reference (the search then measures the impact bound only).
 */
import { buyPriceForUsd, sellPriceForUsd, type BookSides } from '../cex/book-math.js';
import type { ReferenceBook } from './depth-search.js';

export function cexReference(
  book: (BookSides & { taken_at: number }) | undefined,
  takerFeeBps: number,
  maxAgeMs: number,
  now = Date.now(),
): ReferenceBook | undefined {
  if (!book || now - book.taken_at > maxAgeMs) return undefined;
  return {
    feeBps: takerFeeBps,
    buyPrice: (sizeUsd) => buyPriceForUsd(book, sizeUsd),
    sellPrice: (sizeUsd) => sellPriceForUsd(book, sizeUsd),
  };
}
