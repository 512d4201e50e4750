/**
 * rag-shrink's class, id and role rules never drop the container that holds the main text (issue 23, item 6): a
 * blog theme's `id="contentWithSidebar"` (the page of the issue came back as its 618-character footer), a
 * `role="complementary"` on the post body, a section anchored by a slug of its heading. A real sidebar inside that
 * container is still dropped. (Before issue 23, the first four pages below came back without their article.)
 */
import { describe, expect, it } from 'vitest';
import { shrinkHtml } from '../../jobs/rag-shrink/shrink.js';

const para = (topic: string, i: number) =>
  `<p>The ${topic} report, part ${i}, describes how the river delta changed over the last decade, with measurements taken every spring by the survey team, and what the engineers propose to protect the villages nearby from the floods.</p>`;
const article = (topic: string) => Array.from({ length: 8 }, (_, i) => para(topic, i + 1)).join('');

function page(wrapperAttrs: string): string {
  return `<!doctype html><html><head><title>Delta survey</title></head><body>
    <div class="header-bar"><a href="/">Home</a> <a href="/about">About</a></div>
    <div ${wrapperAttrs}>
      ${article('delta')}
      <div class="sidebar"><h3>Archives</h3><ul><li><a href="/2019">2019</a></li><li><a href="/2018">2018</a></li></ul><p>Sidebar blurb about the author of this blog and her other projects.</p></div>
    </div>
    <div id="footer"><p>Copyright 2020 The Delta Blog. Powered by a theme. Contact us at the address below for anything.</p></div>
  </body></html>`;
}

describe('rag-shrink keeps the container of the main text whatever its class, id or role says', () => {
  for (const attrs of [
    'id="contentWithSidebar"',
    'class="layout-with-sidebar"',
    'class="wrap footer-pushed"',
    'role="complementary"',
    'id="comments-and-content"',
  ])
    it(attrs, () => {
      const { content } = shrinkHtml(page(attrs), { keepLinks: false });
      for (let i = 1; i <= 8; i++) expect(content, attrs).toContain(`The delta report, part ${i},`);
      expect(content).not.toContain('Sidebar blurb');
    });

  it('reads no boilerplate word in an id that is a heading slug', () => {
    const html = `<!doctype html><html><body><div class="document">
      <div class="section" id="sharing-with-a-single-developer"><h2>Sharing with a single developer</h2>${article('sharing')}</div>
      <div class="section" id="sharing-changes-with-your-team"><h2>Sharing changes with your team</h2>${article('team')}</div>
    </div></body></html>`;
    const { content } = shrinkHtml(html, { keepLinks: false });
    expect(content).toContain('The sharing report, part 8,');
    expect(content).toContain('The team report, part 8,');
  });
});
