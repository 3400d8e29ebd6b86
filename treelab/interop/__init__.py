"""Bring your own search: other MCTS libraries' trees in (OpenSpiel, mctx, alpha-zero-general, plain rows), and
treelab's trees out to the formats graph tools and move-tree viewers read (node-link, GML, an opening explorer's
JSON, KataGo's analysis JSON). See ``docs/guide/interop.md``."""
