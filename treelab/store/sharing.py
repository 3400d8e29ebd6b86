"""A worker's copy of the tree refreshed from the file: what the other workers added at the top.

Each worker of parallel training (:mod:`treelab.play.workers`) grows its own copy; now and then it
reads the file's counts and proofs of the top levels so that its search sees the others' games.
"""

from __future__ import annotations

from ..errors import StoreError
from ..nodes import Proof
from ..tree import Tree, TreeNode
from .dbfile import reading
from .deltas import LOCAL
from .schema import DbPath

__all__ = ["share_top"]


def share_top(db: DbPath, tree: Tree, depth: int) -> int:
    """Give ``tree``'s stored nodes down to ``depth`` the file's counts, value sums, proofs and priors: what the other
    workers added there.

    Only for a worker's copy with nothing to hand on (right after :func:`take` or
    :func:`start`): the counts set here are no change of its own, so no delta carries them.

    Returns:
        The nodes refreshed.
    """
    if tree.baselines or tree.new_nodes:
        raise StoreError("share_top needs a copy with nothing to hand on: take() first")
    level, nodes = [tree.root], dict[int, TreeNode]()
    for _ in range(depth + 1):
        nodes.update((n.node_id, n) for n in level if n.node_id < LOCAL)
        level = [kid for n in level for kid in n.children_view]
    with reading(db) as (conn, _):
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.wanted")
        conn.executemany("INSERT INTO temp.wanted VALUES (?)", ((i,) for i in nodes))
        rows = conn.execute("SELECT n.id, n.nb_visit, n.nb_win, n.nb_draw, n.nb_select, n.proven, n.value_sum, "
                            "n.prior FROM temp.wanted AS w JOIN nodes AS n ON n.id = w.id").fetchall()
    priors = tree.priors
    for nid, visits, wins, draws, selects, proven, value, prior in rows:
        node = nodes[nid]
        node.nb_visit, node.nb_win, node.nb_draw, node.nb_select = visits, wins, draws, selects
        if proven is not None and node.proven is None:
            node.proven = Proof.of(proven)
        if value or node.value_sum:
            node.value_sum = float(value)
            tree.valued = tree.valued or bool(value)
        if prior is not None and node not in priors:
            priors[node] = float(prior)
    return len(rows)
