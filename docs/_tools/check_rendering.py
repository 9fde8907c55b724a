"""Render built documentation pages in headless Chromium and check them.

For each page, at each window width, the page is loaded from disk (no network)
and, once MathJax has typeset, measured in the browser:

* horizontal overflow: the page wider than the window, or an element reaching
  past the right edge of the article column (boxes that scroll inside
  themselves, such as code blocks, wide tables and long formulas, are listed
  but allowed);
* wrapped lines: a code or printed-output block with more lines on screen
  than in its text (its lines must scroll inside the box, not wrap);
* raw TeX: ``\\(`` or ``\\[`` left in the visible text (MathJax did not run);
* how many formulas MathJax typeset.

Usage (after ``python -m sphinx -b html docs docs/_build/html``)::

    python docs/_tools/check_rendering.py docs/_build/html index.html \\
        getting_started.html --screenshots /tmp/screens

Exits with status 1 when a page overflows, wraps a block's lines or shows raw
TeX. Needs a ``chromium`` (or ``chromium-browser``, ``google-chrome``)
executable.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=8000",
]

_PROBE = r"""
<script>
function noisyProbe() {
  const root = document.documentElement;
  const result = {width: root.scrollWidth, window: root.clientWidth,
                  outside: [], scrolling: [], wrapped: [], raw_tex: 0,
                  formulas: 0};
  const column = document.querySelector(".bd-article-container") || document.body;
  const edge = column.getBoundingClientRect().right + 1;
  const boxes = ".pst-scrollable-table-container, pre, div.math, .highlight, "
              + "mjx-container[display='true'], .output_subarea";
  const label = (el) => el.tagName.toLowerCase() + "." + el.className + ": "
              + (el.textContent || "").trim().slice(0, 50);
  for (const el of column.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width && box.right > edge && !el.closest(boxes + ", mjx-container")) {
      result.outside.push(label(el));
    }
    if (el.scrollWidth > el.clientWidth + 1 && el.matches(boxes)) {
      // a box whose content is wider: it must scroll, not spill over
      const spills = getComputedStyle(el).overflowX === "visible";
      (spills ? result.outside : result.scrolling).push(label(el));
    }
  }
  for (const pre of column.querySelectorAll("pre")) {
    // a printed or code line the browser wrapped: more line boxes than lines
    const range = document.createRange();
    range.selectNodeContents(pre);
    const tops = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)));
    if (tops.size > pre.textContent.replace(/\n$/, "").split("\n").length) {
      result.wrapped.push(label(pre));
    }
  }
  result.formulas = document.querySelectorAll("mjx-container").length;
  result.raw_tex = (document.body.innerText.match(/\\\(|\\\[/g) || []).length;
  const out = document.createElement("pre");
  out.id = "noisy-probe";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
}
window.addEventListener("load", () => setTimeout(() => {
  const ready = window.MathJax && MathJax.startup ? MathJax.startup.promise
                                                  : Promise.resolve();
  ready.then(noisyProbe);
}, 300));
</script>
"""


def find_chromium() -> str:
    """The path of a Chromium-like browser, or a clear error."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("check_rendering: no chromium executable on PATH")


def probe(chromium: str, page: Path, width: int) -> dict:
    """Load ``page`` with the probe script and return what it measured."""
    copy = page.with_name(f"_probe_{page.name}")
    copy.write_text(
        page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"),
        encoding="utf-8",
    )
    try:
        completed = subprocess.run(
            [
                chromium,
                *CHROMIUM_FLAGS,
                f"--window-size={width},2000",
                "--dump-dom",
                copy.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        copy.unlink()
    match = re.search(r'<pre id="noisy-probe">(.*?)</pre>', completed.stdout, re.S)
    if match is None:
        raise RuntimeError(f"{page}: the probe did not run\n{completed.stderr[-2000:]}")
    return json.loads(html.unescape(match.group(1)))


def screenshot(chromium: str, page: Path, target: Path, width: int, height: int):
    """Save a PNG of ``page`` as the browser draws it."""
    subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--window-size={width},{height}",
            f"--screenshot={target}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=180,
        check=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built HTML directory")
    parser.add_argument("pages", nargs="+", help="pages, relative to the site")
    parser.add_argument("--widths", default="1280,1024", help="window widths")
    parser.add_argument("--screenshots", type=Path, help="directory for PNGs")
    parser.add_argument("--height", type=int, default=2000)
    args = parser.parse_args(argv)
    chromium = find_chromium()
    failed = False
    for name in args.pages:
        page = args.site / name
        for width in (int(w) for w in args.widths.split(",")):
            result = probe(chromium, page, width)
            bad = (
                result["width"] > result["window"]
                or result["outside"]
                or result["wrapped"]
                or result["raw_tex"]
            )
            failed = failed or bool(bad)
            print(
                f"{'FAIL' if bad else 'ok  '} {name} @{width}px: "
                f"page {result['width']}/{result['window']} px, "
                f"{len(result['outside'])} past the edge, "
                f"{len(result['scrolling'])} scrolling inside their box, "
                f"{len(result['wrapped'])} with wrapped lines, "
                f"{result['formulas']} formulas typeset, "
                f"{result['raw_tex']} raw TeX"
            )
            for item in result["outside"][:5]:
                print(f"     past the edge: {item}")
            for item in result["wrapped"][:5]:
                print(f"     wrapped lines: {item}")
        if args.screenshots:
            args.screenshots.mkdir(parents=True, exist_ok=True)
            target = args.screenshots / (Path(name).stem + ".png")
            screenshot(chromium, page, target, 1280, args.height)
            print(f"     screenshot: {target}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
