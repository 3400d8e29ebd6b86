"""Each rule written once: UCB1, the proof rule and its words, anytree's slot names shared with C."""

from __future__ import annotations

import io
import math
import re
import tokenize
from pathlib import Path

import pytest

import treelab
from treelab.mcts.policies import ucb1
from treelab.mcts.selection import select_ucb1
from treelab.mcts.solver import propagate
from treelab.nodes import CHILDREN_SLOT, PARENT_SLOT, Proof, TreeNode, proof_word, ucb1_score

PACKAGE = Path(treelab.__file__).resolve().parent


def _code_lines(path: Path) -> list[tuple[int, set[str], set[str]]]:
    """Each source line's names and string literals, comments and docstrings aside."""
    names: dict[int, set[str]] = {}
    strings: dict[int, set[str]] = {}
    tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text()).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.NAME:
            names.setdefault(tok.start[0], set()).add(tok.string)
        elif tok.type == tokenize.STRING:
            before = tokens[i - 1].type if i else tokenize.NEWLINE
            if before not in (tokenize.INDENT, tokenize.NEWLINE, tokenize.NL, tokenize.DEDENT):  # not a docstring
                strings.setdefault(tok.start[0], set()).add(tok.string.strip("\"'"))
    lines = sorted(set(names) | set(strings))
    return [(n, names.get(n, set()), strings.get(n, set())) for n in lines]


def _python_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_ucb1_formula_is_written_at_most_twice_in_python():
    """``sqrt`` of a ``log`` on one line is the UCB1 exploration term: at most two (a scalar, a numpy form)."""
    found = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in _python_modules()
        for n, names, _ in _code_lines(path)
        if "sqrt" in names and "log" in names
    ]
    assert 1 <= len(found) <= 2, found
    assert any(place.startswith("nodes.py:") for place in found), found


def test_the_proof_words_and_the_proof_rule_live_in_one_place_each():
    words = {"win", "loss"}  # a table of the words names both on one line
    spelled = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in _python_modules()
        for n, _, strings in _code_lines(path)
        if words <= strings
    ]
    assert spelled and all(place.startswith("nodes.py:") for place in spelled), spelled
    rules = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in _python_modules()
        for n, names, _ in _code_lines(path)
        if {"def", "propagate"} <= names or {"def", "_propagate"} <= names
    ]
    assert rules == [r for r in rules if r.startswith(str(Path("mcts", "solver.py")))] and len(rules) == 1, rules


def test_the_mangled_slot_names_are_spelled_once_in_python_and_match_the_c_sources():
    spelled = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in _python_modules()
        for n, _, strings in _code_lines(path)
        if any("LightNodeMixin__" in s for s in strings)
    ]
    assert len(spelled) == 2 and all(place.startswith("nodes.py:") for place in spelled), spelled
    header = (PACKAGE / "_speedups.h").read_text()
    enum = re.search(r"enum\s*{([^}]*N_FIELDS[^}]*)}", header)  # the fields' enum (the header has others)
    assert enum is not None
    fields = [f.strip() for f in enum.group(1).split(",") if f.strip()]
    nodes_c = (PACKAGE / "_nodes.c").read_text()
    table = re.search(r"FIELD_NAMES\[N_FIELDS\]\s*=\s*{([^}]*)}", nodes_c)
    assert table is not None
    names = re.findall(r'"([^"]+)"', table.group(1))
    assert len(names) == fields.index("N_FIELDS")
    by_field = dict(zip(fields, names, strict=False))
    assert by_field["F_KIDS"] == CHILDREN_SLOT and by_field["F_PARENT"] == PARENT_SLOT
    slots = set(TreeNode.__slots__) | {CHILDREN_SLOT, PARENT_SLOT}
    assert set(names) <= slots, set(names) - slots
    rows_c = (PACKAGE / "_rows.c").read_text()
    assert "LightNodeMixin" not in rows_c and "F_KIDS" in rows_c  # _rows.c reaches the slots through _nodes.c
    node = TreeNode("root")
    kid = TreeNode("4", node)
    assert getattr(kid, PARENT_SLOT) is node and getattr(node, CHILDREN_SLOT) is kid  # one child: kept without a list


@pytest.mark.parametrize(("w", "d", "n", "big_n", "c"), [(3, 0, 4, 1, 1.4), (3, 2, 10, 100, 1.0), (0, 0, 1, 2, 0.0),
                                                         (7, 1, 9, 57, math.sqrt(2))])
def test_ucb1_score_is_the_textbook_formula(w, d, n, big_n, c):
    mean = (w + d / 2) / n
    expected = mean + c * math.sqrt(math.log(big_n) / n) if big_n > 1 else mean
    assert ucb1_score(w, d, n, big_n, c) == pytest.approx(expected, rel=1e-12)
    assert ucb1_score(w, d, 0, big_n, c) == math.inf
    parent = TreeNode("root", nb_visit=big_n)
    kid = TreeNode("1", parent, nb_visit=n, nb_win=w, nb_draw=d)
    assert kid.ucb1(c) == ucb1_score(w, d, n, big_n, c) == ucb1(kid, big_n, c=c)


def test_selection_takes_the_best_ucb1_score_and_unvisited_first():
    root = TreeNode("root", nb_visit=30)
    a = TreeNode("1", root, nb_visit=10, nb_win=6)
    b = TreeNode("2", root, nb_visit=15, nb_win=10)
    TreeNode("3", root, nb_visit=5, nb_win=1)
    assert select_ucb1(root, 1.0, False) is max(root.children_view, key=lambda k: k.ucb1(1.0))
    assert select_ucb1(root, 0.0, False) is b
    b.proven = Proof.WIN
    assert select_ucb1(root, 0.0, True) is a  # the solver never descends into a proven move
    fresh = TreeNode("4", root)
    assert select_ucb1(root, 1.0, False) is fresh


def test_proof_values_words_and_negation():
    assert [p.word for p in Proof] == ["loss", "draw", "win"]
    assert -Proof.WIN is Proof.LOSS and -Proof.DRAW is Proof.DRAW and -Proof.LOSS is Proof.WIN
    assert Proof.of(1) is Proof.WIN and Proof.of(None) is None and proof_word(-1) == "loss"
    assert Proof.of_winner(None, 1) is Proof.DRAW and Proof.of_winner(2, 2) is Proof.WIN
    assert Proof.of_winner(1, 2) is Proof.LOSS
    with pytest.raises(ValueError, match=r"proven 5 is not"):
        Proof.of(5)
    assert Proof.WIN == 1 and Proof.LOSS == -1  # the database's values


def test_propagation_proves_a_parent_with_a_winning_move_and_one_whose_moves_all_lose():
    tree = treelab.Tree("tictactoe")
    nodes, _ = tree.path("12")
    parent, kid = nodes[1], nodes[2]
    kid.proven = Proof.WIN
    propagate(tree, nodes, lambda i: 8, first=1)
    assert parent.proven is Proof.LOSS  # the player to move at "1" has a winning move
    assert tree.root.proven is None  # one losing move does not prove the root
    leaf_parent = tree.root
    tree2 = treelab.Tree("tictactoe")
    path2, _ = tree2.path("1")
    for move in "23456789":
        tree2.path("1" + move)
    for k in path2[1].children_view:
        k.proven = Proof.LOSS
    propagate(tree2, path2, lambda i: 9 if i == 0 else 8, first=1)
    assert path2[1].proven is Proof.WIN and leaf_parent.proven is None


def test_a_searched_and_reloaded_tree_holds_proof_values(tmp_path):
    tree = treelab.Tree("tictactoe")
    treelab.search(tree, "", limit=treelab.Limit(iterations=3000), solver=True, rng=1)
    proven = {n.sequence: n.proven for n in tree if n.proven is not None}
    assert proven and all(isinstance(p, Proof) for p in proven.values())
    tree.save(tmp_path / "t.db")
    back = treelab.load(tmp_path / "t.db")
    again = {n.sequence: n.proven for n in back if n.proven is not None}
    assert again == proven and all(isinstance(p, Proof) for p in again.values())
    part = treelab.load(tmp_path / "t.db", path="5", depth=2)
    assert all(isinstance(n.proven, Proof) for n in part if n.proven is not None)


PHASES = re.compile(r"\b(UCTPhases|GraphPhases|PUCTPhases)(\.of)?\(")


def test_the_phases_of_a_search_are_chosen_in_one_place():
    """Only the dispatch makes an algorithm's phases from a config (a class's own ``cls(...)`` aside)."""
    made = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in _python_modules()
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if PHASES.search(line) and not line.lstrip().startswith(("class ", "#", '"', "``"))
        and "``" not in line
    ]
    assert made and all(place.startswith("mcts/dispatch.py:") for place in made), made


OLD_NAMES = {"c_puct", "ucb_c", "uct_c", "dirichlet_alpha", "dirichlet_fraction"}
"""Old spellings of ``c`` and of the root noise's ``alpha``/``fraction``: deprecated aliases only."""

NOT_YET: set[str] = set()
"""Files still naming an old spelling in code (none now). A file here makes the test fail once it is clean,
so the set cannot go stale."""


def test_old_option_names_live_only_as_deprecated_aliases():
    """No code names ``c_puct``, ``ucb_c``, ``uct_c``, ``dirichlet_alpha`` or ``dirichlet_fraction`` but the
    deprecated property ``SearchConfig.ucb_c``; as strings they appear only where an alias is resolved."""
    named = {
        f"{path.relative_to(PACKAGE)}:{n}": sorted(names & OLD_NAMES)
        for path in _python_modules()
        for n, names, _ in _code_lines(path)
        if names & OLD_NAMES
    }
    allowed = {place for place, names in named.items() if place.startswith("mcts/config.py:") and names == ["ucb_c"]}
    assert len(allowed) == 1  # def ucb_c, the deprecated property
    stale = {place.partition(":")[0] for place in set(named) - allowed}
    assert stale == NOT_YET, {place: names for place, names in named.items() if place not in allowed}
    from treelab.mcts.config import ALIASES, NOISE_ALIASES
    from treelab.play.arena import SPEC_ALIASES

    spelled = {
        f"{path.relative_to(PACKAGE)}"
        for path in _python_modules()
        for _, _, strings in _code_lines(path)
        if strings & OLD_NAMES
    }
    assert spelled <= {"mcts/config.py", "mcts/dispatch.py", "play/players.py", "play/arena.py",
                       "play/openspiel_bot.py"}, spelled
    aliased = set(ALIASES) | set(NOISE_ALIASES) | {old for table in SPEC_ALIASES.values() for old in table}
    assert OLD_NAMES - {"dirichlet"} <= aliased | {"ucb_c"}


def test_the_command_line_has_one_name_per_search_option():
    from click.testing import CliRunner

    from treelab.cli import cli

    for command in ("train", "analyse", "arena"):
        text = CliRunner().invoke(cli, [command, "--help"]).output
        for old in ("--c-puct", "--ucb-c", "--uct-c", "--dirichlet", "c_puct", "uct_c", "dirichlet="):
            assert old not in text, (command, old)
