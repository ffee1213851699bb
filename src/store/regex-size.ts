/**
 * A cheap, linear pass over a regular expression (RE2 syntax) that estimates the size of its compiled
 * program from its repetition counts, without building anything (issue 23): RE2 expands `x{n,m}` into `m`
 * copies of `x`, so `(.*){999}` repeated a few hundred times is a program of a million instructions that
 * takes seconds and hundreds of megabytes to compile. The estimate follows RE2's compiler (one instruction
 * per literal, class or assertion, one more per `*`/`+`/`?`/`|`, two per group, a repeat multiplies its
 * operand) and never undercounts by much; it does not check syntax (re2js does that afterwards, on a
 * pattern known to be small). Escapes, classes and `\Q…\E` are skipped as RE2 reads them, so a `(` inside
 * `[(]` is not a group.
 */

/** One open group: the size of its finished alternatives, of its current concatenation, of its last atom. */
interface Frame {
  alts: number;
  concat: number;
  last: number;
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/;

/** Length of the escape starting at `i` (a backslash): `\x{…}`, `\p{…}`, `\pN`, `\x41` or one character. */
function escapeLength(p: string, i: number): number {
  const c = p[i + 1];
  if ((c === "x" || c === "p" || c === "P") && p[i + 2] === "{") {
    const end = p.indexOf("}", i + 3);
    return end < 0 ? p.length - i : end - i + 1;
  }
  if (c === "x") return 4;
  if (c === "p" || c === "P") return 3;
  return 2;
}

/** Index just past the character class starting at `i` (a `[`). */
function classEnd(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === "^") j++;
  if (p[j] === "]") j++;
  while (j < p.length && p[j] !== "]") {
    if (p[j] === "\\") j += escapeLength(p, j);
    else if (p[j] === "[" && p[j + 1] === ":") {
      const end = p.indexOf(":]", j + 2);
      j = end < 0 ? j + 1 : end + 2;
    } else j++;
  }
  return j + 1;
}

/**
 * Estimated number of instructions of `pattern`'s compiled program (a count, ≥ 1; `Infinity` for absurd
 * nestings). Linear in the pattern's length; never throws.
 */
export function estimateProgramSize(pattern: string): number {
  const stack: Frame[] = [];
  let f: Frame = { alts: 0, concat: 0, last: 0 };
  const atom = (size: number) => {
    f.concat += size;
    f.last = size;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") {
      if (pattern[i + 1] === "Q") {
        const end = pattern.indexOf("\\E", i + 2);
        const stop = end < 0 ? pattern.length : end;
        f.concat += stop - (i + 2);
        f.last = 1;
        i = end < 0 ? stop : stop + 2;
        continue;
      }
      atom(1);
      i += escapeLength(pattern, i);
    } else if (c === "[") {
      atom(1);
      i = classEnd(pattern, i);
    } else if (c === "(") {
      stack.push(f);
      f = { alts: 0, concat: 0, last: 0 };
      i++;
      if (pattern[i] === "?") {
        // (?flags), (?flags:…), (?P<name>…), (?<name>…): skip the header.
        while (i < pattern.length && pattern[i] !== ")" && pattern[i] !== ":" && pattern[i] !== ">") i++;
        if (pattern[i] === ")") {
          f = stack.pop() as Frame;
          i++;
          continue;
        }
        i++;
      }
    } else if (c === ")") {
      const size = f.alts + f.concat + 2;
      f = stack.pop() ?? { alts: 0, concat: 0, last: 0 };
      atom(size);
      i++;
    } else if (c === "|") {
      f.alts += f.concat + 1;
      f.concat = 0;
      f.last = 0;
      i++;
    } else if (c === "*" || c === "+" || c === "?") {
      f.concat += 1;
      f.last += 1;
      i += pattern[i + 1] === "?" ? 2 : 1;
    } else if (c === "{" && REPEAT.test(pattern.slice(i, i + 16))) {
      const m = REPEAT.exec(pattern.slice(i, i + 16)) as RegExpExecArray;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? min + 1 : Number(m[3]);
      const copies = Math.max(min, max, 1);
      const grown = f.last * copies + Math.max(0, max - min);
      f.concat += grown - f.last;
      f.last = grown;
      i += m[0].length;
      if (pattern[i] === "?") i++;
    } else {
      atom(1);
      i += (pattern.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    }
  }
  while (stack.length) {
    const size = f.alts + f.concat + 2;
    f = stack.pop() as Frame;
    atom(size);
  }
  return f.alts + f.concat + 2;
}
