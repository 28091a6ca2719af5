// The fenced code blocks of the README and docs/, with the markers that say
// how the snippets test (snippets.test.ts) holds each to what it shows. A
// marker is an HTML comment on a line of its own just above the fence (one
// per directive, several stacked), invisible where the Markdown is rendered:
//
//   <!-- snippet: run -->                  sh: run, in document order, in a scratch folder of the file's
//   <!-- snippet: given KEY, URL -->       … with these variables set by the test to its own service's (the
//                                          block's own `KEY=…`/`URL=…` lines, which a reader edits, dropped)
//   <!-- snippet: check: <why not run> --> sh/console: not run; its commands are checked to exist
//                                          (package scripts, files, zkagent commands)
//   <!-- snippet: declare <TypeScript> --> ts/js: what the snippet uses without defining it
//   <!-- snippet: runtime bun -->          ts/js: compiled with Bun's types rather than Node's
//   <!-- snippet: mcp-config -->           json: an MCP client's configuration, whose server is started
//                                          (the zkagent command and the identity path the test's own)
//
// Every sh and console block carries run or check; ts and js blocks are
// compiled under strict tsc against the packed packages; python blocks are
// compiled by python3; an untagged block must not hold commands (tag it).
// `# {…}` comment lines right after a command in a run block are its
// expected answer: the command's last line of output must be that JSON
// object, with the same members, and equal values wherever the comment shows
// one (a value with "…" in it only says the member is there).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");

export interface Snippet {
  /** Path relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  run: boolean;
  given: string[];
  /** Why it is not run (check only). */
  check?: string;
  declare: string[];
  runtime: "node" | "bun";
  /** A json block that is an MCP client's configuration: the snippets test starts its server and lists the tools. */
  mcpConfig: boolean;
}

/** The Markdown files whose snippets are held to what they show. */
export function documents(): string[] {
  const md = (dir: string) =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((name) => join(dir, name));
  const examples = readdirSync(join(ROOT, "examples"))
    .sort()
    .flatMap((name) => {
      try {
        return md(join("examples", name));
      } catch {
        return [];
      }
    });
  return ["README.md", ...md("docs"), ...md("docs/packages"), ...examples];
}

const MARKER = /^<!-- snippet: (.*) -->$/;

export function snippets(file: string): Snippet[] {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const found: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const markers: string[] = [];
    for (let j = start - 1; j >= 0 && MARKER.test(lines[j]!); j--) markers.unshift(MARKER.exec(lines[j]!)![1]!);
    const snippet: Snippet = {
      file,
      line: start + 1,
      lang: open[1]!,
      code: body.join("\n"),
      run: false,
      given: [],
      declare: [],
      runtime: "node",
      mcpConfig: false,
    };
    for (const marker of markers) {
      if (marker === "run") snippet.run = true;
      else if (marker.startsWith("given ")) snippet.given = marker.slice(6).split(/,\s*/);
      else if (marker.startsWith("check: ")) snippet.check = marker.slice(7);
      else if (marker.startsWith("declare ")) snippet.declare.push(marker.slice(8));
      else if (marker === "runtime bun") snippet.runtime = "bun";
      else if (marker === "mcp-config") snippet.mcpConfig = true;
      else throw new Error(`${file}:${start + 1}: unknown snippet marker "${marker}"`);
    }
    found.push(snippet);
  }
  return found;
}

/** The shell commands a block shows: logical lines (continuations joined), comments dropped; for a console block the `$ ` lines. */
export function commandsOf(snippet: Snippet): string[] {
  const logical: string[] = [];
  let pending = "";
  for (const raw of snippet.code.split("\n")) {
    let line = raw;
    if (snippet.lang === "console") {
      if (!line.startsWith("$ ") && pending === "") continue;
      if (line.startsWith("$ ")) line = line.slice(2);
    }
    const continued = /\\\s*$/.test(line);
    pending += `${continued ? line.replace(/\\\s*$/, "") : line} `;
    if (!continued) {
      logical.push(pending.trim().replace(/\s+/g, " "));
      pending = "";
    }
  }
  return logical
    .map((line) => withoutComment(line).trim())
    .filter((line) => line !== "")
    .flatMap((line) => line.split(/\s*(?:&&|\|\||;|\|)\s*|\$\(/))
    .map((part) => part.trim().replace(/^[A-Z_]+=\S*\s+/g, ""))
    .filter((part) => part !== "");
}

/** A shell line without its comment: a `#` that starts a word, outside quotes. */
function withoutComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** The lines of an untagged block that look like commands (they must be in a tagged block, so they are held to what they say). */
export const commandLike = (code: string): string[] => code.split("\n").filter((line) => /^(\$ )?(bun|bunx|zkagent|npx|npm|curl|python3|node) /.test(line));
