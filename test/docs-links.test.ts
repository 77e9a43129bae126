import { expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// Every relative link of the README and docs/ must lead somewhere: the file exists and, when the
// link names an anchor (`#…` in the same page, `file.md#…` in another), the page has that heading,
// slugged as GitHub slugs it.

const ROOT = resolve(import.meta.dir, "..");
const PAGES = ["README.md", ...new Bun.Glob("docs/**/*.md").scanSync({ cwd: ROOT })].sort();

/** The page's prose: fenced code blocks blanked (their lines kept, so line numbers stay true) and inline code removed. */
function prose(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker?.[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return "";
    }
    if (marker) {
      fence = marker;
      return "";
    }
    return line.replace(/(`+)[^`]*?\1/g, "");
  });
}

/** GitHub's heading ids: the text as rendered, lower-cased, punctuation dropped, each space a '-'; repeats get -1, -2, …. */
function anchorsOf(page: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let inFence: string | undefined;
  for (const line of readFileSync(join(ROOT, page), "utf8").split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!inFence || (marker[0] === inFence[0] && marker.length >= inFence.length))) {
      inFence = inFence ? undefined : marker;
      continue;
    }
    const heading = inFence ? undefined : /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    // Code spans render as their text; outside them, links render as their text and HTML tags as nothing.
    const rendered = heading
      .split(/(`+[^`]*?`+)/)
      .map((part, i) => (i % 2 ? part : part.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "")))
      .join("");
    const slug = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

function linksOf(page: string): Link[] {
  const links: Link[] = [];
  prose(readFileSync(join(ROOT, page), "utf8")).forEach((text, index) => {
    const found = [
      ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((m) => m[1]!),
    ];
    for (const target of found) links.push({ page, line: index + 1, target });
  });
  return links;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** Why a relative link does not resolve, or undefined when it does. */
function brokenBecause({ page, target }: Link): string | undefined {
  const hashAt = target.indexOf("#");
  const path = hashAt < 0 ? target : target.slice(0, hashAt);
  const anchor = hashAt < 0 ? undefined : decodeURIComponent(target.slice(hashAt + 1));
  const file = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path));
  if (!file.startsWith(ROOT) || !existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (anchor === undefined) return undefined;
  if (!statSync(file).isFile() || !file.endsWith(".md")) return `an anchor into ${relative(ROOT, file)}, which is not a page`;
  return anchorsOf(relative(ROOT, file)).has(anchor) ? undefined : `no heading #${anchor} in ${relative(ROOT, file)}`;
}

test("the README and every page of docs/ are read", () => {
  expect(PAGES).toContain("README.md");
  expect(PAGES).toContain("docs/compat-el.md");
  expect(PAGES).toContain("docs/providers/elevenlabs.md");
});

test("headings are slugged as GitHub slugs them", () => {
  const anchors = anchorsOf("docs/compat-el.md");
  expect(anchors).toContain("el--elevenlabs-compatible-surface");
  expect(anchors).toContain("character-timings-with-timestamps");
  expect(anchors).toContain("conversations-convaiconversation");
  expect(anchorsOf("docs/compat-oai.md")).toContain("not-offered-1");
  expect(anchorsOf("docs/compat-oai.md")).toContain("conversations-modelprofile-id");
});

test("every relative link and anchor of the docs resolves", () => {
  const relativeLinks = PAGES.flatMap(linksOf).filter((link) => !isExternal(link.target));
  expect(relativeLinks.length).toBeGreaterThan(100);
  expect(relativeLinks.some((link) => link.target.startsWith("#"))).toBe(true);
  expect(relativeLinks.some((link) => /\.md#/.test(link.target))).toBe(true);
  const broken = relativeLinks.flatMap((link) => {
    const why = brokenBecause(link);
    return why ? [`${link.page}:${link.line} (${link.target}): ${why}`] : [];
  });
  expect(broken).toEqual([]);
});
