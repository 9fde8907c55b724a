"""Sphinx extension: links out of the sklearn-noisy documentation.

Two post-transforms, applied to every page when it is written:

* ``arXiv:NNNN.NNNNN`` in running text becomes a link to the paper's abstract
  page on arxiv.org, wherever the paper is cited; so does the first mention on
  a page of an author phrase listed in ``noisy_links_citations``.
* An inline literal that names a scikit-learn, numpy, scipy or Python object
  (``GridSearchCV``, ``cross_val_score``, ``numpy.random.default_rng``,
  ``np.unique``) becomes a link to that object's documentation, found in the
  intersphinx inventories. Without inventories (an offline build) the literal
  stays plain text, so the build is the same, warning-free, either way.

Literals inside code blocks, inside existing links, and names that sklearn-noisy
itself exports are left alone; a short name (without its module) is linked only
when it names exactly one public scikit-learn class or function.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

ARXIV = re.compile(r"\barXiv:(\d{4}\.\d{4,5})(v\d+)?\b")
ARXIV_URL = "https://arxiv.org/abs/{}"
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_ALIASES = {"np.": "numpy.", "sp.": "scipy.", "pd.": "pandas."}
_OBJECT_TYPES = (
    "py:class",
    "py:function",
    "py:method",
    "py:exception",
    "py:module",
    "py:attribute",
    "py:data",
)
_SKIP_PARENTS = (
    nodes.reference,
    nodes.literal_block,
    nodes.doctest_block,
    nodes.math,
    nodes.math_block,
    nodes.raw,
    nodes.comment,
    nodes.title,
)


def _uri(item) -> str:
    """The target of an inventory entry (an object in Sphinx >= 8.2, a tuple before)."""
    uri = getattr(item, "uri", None)
    return uri if uri is not None else item[2]


def _inside(node: nodes.Node, kinds: tuple) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        parent = parent.parent
    return False


def build_index(named_inventory: dict, *, exclude: frozenset = frozenset()) -> dict:
    """Map literal texts to documentation URLs.

    Parameters
    ----------
    named_inventory : dict
        ``{project: {object type: {full name: entry}}}``, intersphinx's
        ``env.intersphinx_named_inventory``.
    exclude : frozenset of str, default=frozenset()
        Short names never linked (the names sklearn-noisy exports).

    Returns
    -------
    dict
        Dotted full names of every project's Python objects (``json.dumps``,
        ``numpy.unique``; of the undotted ones only exceptions, ``ValueError``:
        ``None`` or ``time`` are too often not the object), and the short names
        of scikit-learn's public classes and functions that name one object.
    """
    index: dict[str, str] = {}
    short: dict[str, set[str]] = {}
    for project, inventory in named_inventory.items():
        for object_type in _OBJECT_TYPES:
            for name, item in inventory.get(object_type, {}).items():
                parts = name.split(".")
                if len(parts) > 1 or object_type == "py:exception":
                    index.setdefault(name, _uri(item))
                if (
                    project == "sklearn"
                    and object_type in ("py:class", "py:function")
                    and not any(part.startswith("_") for part in parts)
                ):
                    short.setdefault(parts[-1], set()).add(name)
    for name, full_names in short.items():
        if len(full_names) == 1 and name not in exclude and name not in index:
            index[name] = index.get(next(iter(full_names)), "")
    return {name: uri for name, uri in index.items() if uri}


def _lookup(index: dict, text: str) -> str | None:
    text = text.strip()
    text = text.removesuffix("()")
    for alias, module in _ALIASES.items():
        if text.startswith(alias):
            text = module + text[len(alias) :]
    if not _NAME.match(text):
        return None
    return index.get(text)


def _replace(text: nodes.Text, match: re.Match, url: str) -> list[nodes.Text]:
    """Make ``match`` in ``text`` a link; return the text before and after it."""
    before = nodes.Text(text[: match.start()])
    after = nodes.Text(text[match.end() :])
    link = nodes.reference(match.group(0), match.group(0), refuri=url, internal=False)
    text.parent.replace(text, [before, link, after])
    return [before, after]


class TextLinks(SphinxPostTransform):
    """Paper identifiers and citations in running text become links.

    Every ``arXiv:2209.15588`` links to its abstract page; the first mention on
    a page of an author phrase in ``noisy_links_citations`` links to its URL.
    """

    default_priority = 900

    def run(self, **kwargs) -> None:
        self.pending = dict(self.config.noisy_links_citations)
        skip = (*_SKIP_PARENTS, nodes.literal)
        for text in list(self.document.findall(nodes.Text)):
            if not _inside(text, skip):
                self._link(text)

    def _link(self, text: nodes.Text) -> None:
        matches = [
            (match, url)
            for phrase, url in self.pending.items()
            if (match := re.search(re.escape(phrase), text))
        ]
        if matches:
            match, url = min(matches, key=lambda pair: pair[0].start())
            del self.pending[match.group(0)]
        else:
            match = ARXIV.search(text)
            if match is None:
                return
            url = ARXIV_URL.format(match.group(1) + (match.group(2) or ""))
        for piece in _replace(text, match, url):
            self._link(piece)


class LiteralLinks(SphinxPostTransform):
    """Inline literals naming a documented object link to its page."""

    default_priority = 900

    def run(self, **kwargs) -> None:
        named = getattr(self.env, "intersphinx_named_inventory", None)
        if not named:
            return
        index = getattr(self.app, "_noisy_links_index", None)
        if index is None:  # built once per build, not stored in the environment
            exclude = frozenset(self.config.noisy_links_exclude)
            index = build_index(named, exclude=exclude)
            self.app._noisy_links_index = index
        for literal in list(self.document.findall(nodes.literal)):
            if _inside(literal, _SKIP_PARENTS):
                continue
            uri = _lookup(index, literal.astext())
            if uri is None:
                continue
            reference = nodes.reference(
                "", "", internal=False, refuri=uri, reftitle="(in its documentation)"
            )
            literal.replace_self(reference)
            reference.append(literal)


def setup(app):
    app.add_config_value(
        "noisy_links_exclude", (), "env", types=frozenset({list, tuple})
    )
    app.add_config_value("noisy_links_citations", {}, "env", types=frozenset({dict}))
    app.add_post_transform(TextLinks)
    app.add_post_transform(LiteralLinks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
