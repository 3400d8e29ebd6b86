"""Commands that explore and compare stored trees: ``serve`` (the web explorer) and ``diff``."""

from __future__ import annotations

import json
import math

import click

from .options import ExampleLast, db_argument, json_option, library_errors, option, path_option

__all__ = ["COMMANDS", "describe_diff", "diff", "serve"]


@click.command(cls=ExampleLast)
@db_argument
@option("--compare", "compare", type=click.Path(dir_okay=False), default=None, metavar="DB2", show_default="none",
              help="A second database of the same game, shown side by side (aligned by move path).")
@option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (only this machine can connect to 127.0.0.1).")
@option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port).")
@option("--allow-host", "allow_hosts", multiple=True, metavar="NAME", show_default="the names it listens on",
        help="Also answer requests addressed to NAME (a DNS name other machines use to reach this one; "
             "'*' turns the Host check off). Repeatable.")
@option("--no-browser", is_flag=True, help="Do not open the page in a web browser.")
@option("--model", type=click.Path(dir_okay=False), default=None, metavar="PATH", show_default="none",
        help="A model fitted by 'treelab fit' for this game: its prior beside each move and its value of the "
             "position (JSON: model_prior, model_value).")
@option("--oracle", "with_oracle", is_flag=True,
        help="Show each move's perfect-play value (connect4, tictactoe; JSON: oracle). Early Connect Four "
             "positions beyond a few seconds of solving show none.")
@path_option
@library_errors
def serve(db: str, compare: str | None, host: str, port: int, allow_hosts: tuple[str, ...], no_browser: bool,
          model: str | None, with_oracle: bool, path: str) -> None:
    """Explore the tree in DB in the browser (read-only), live while training writes it.

    The page shows a position's board with each move's visit share and mean
    painted on it, the sortable table of its moves (visits, wins/draws/losses,
    mean, UCB1 and its two terms, proofs), the principal variation, the
    Graphviz subtree, a slider that replays the tree's growth over the training
    games and, with --compare, a second tree aligned by move path. The URL is
    the state: /?path=SEQ. JSON API: /api/node?path=SEQ, /api/subtree.svg.

    It listens on 127.0.0.1 (this machine only) unless --host says otherwise,
    and answers only requests addressed to a name it was bound to (a guard
    against DNS rebinding); --host 0.0.0.0 serves every machine that can reach
    this one, with no password, and says so.

    \b
    Example:
      treelab serve data/connect4.db --compare c4-other.db --port 8765
    """
    from ..play.explorer import explorer_app
    from ..view.explorer.server import allowed_hosts, bind, is_loopback, machine_addresses
    from ..view.explorer.server import serve as run

    hosts = allowed_hosts(host, allow_hosts)
    app = explorer_app(db, compare, hosts=hosts, model=model, oracle=with_oracle)
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    wildcard = host in ("0.0.0.0", "::", "")
    if not is_loopback(host):
        where = "every machine that can reach this one" if wildcard else f"machines that can reach {host}"
        click.echo(f"warning: --host {host} serves {db} to {where}, read-only and with no password; "
                   "use --host 127.0.0.1 to keep it on this machine", err=True)

    def announce(url: str) -> None:
        extra = f" compared with {compare}" if compare else ""
        click.echo(f"serving {db}{extra} read-only at {url} (Ctrl-C stops)", err=False)
        if wildcard:
            others = [a for a in machine_addresses() if not is_loopback(a)]
            links = ", ".join(f"http://{f'[{a}]' if ':' in a else a}:{bound}/" for a in others)
            click.echo(f"  from other machines: {links or 'this machine has no other address'}")

    run(app, sock, open_browser=not no_browser, path=path, announce=announce)


def _num(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.3f}"


def describe_diff(facts: dict[str, object]) -> str:
    """The readable ``diff`` report of a diff object."""
    where = facts["path"] or "the start"
    pv_a, pv_b = facts["principal_variation_a"], facts["principal_variation_b"]
    assert isinstance(pv_a, list) and isinstance(pv_b, list)
    common = int(facts["pv_common"])  # type: ignore[call-overload]
    parting = (
        "they agree" if pv_a == pv_b
        else f"they part after {common} {'move' if common == 1 else 'moves'}"
    )
    lines = [
        f"{facts['game']} trees at {where}: A = {facts['a']}, B = {facts['b']}",
        f"  nodes: A {facts['nodes_a']:,}, B {facts['nodes_b']:,}, both {facts['common']:,} · "
        f"only in A {facts['only_in_a']:,} · only in B {facts['only_in_b']:,}",
        f"  visits here: A {facts['nb_visit_a']:,}, B {facts['nb_visit_b']:,} (B - A = {facts['root_visit_delta']:+,})",
        f"  principal variation A: {' '.join(pv_a) or '-'}",
        f"  principal variation B: {' '.join(pv_b) or '-'}  ({parting})",
        "",
    ]
    header = ["move", "visits A", "visits B", "B - A", "mean A", "mean B", "B - A", "held by"]
    rows = []
    for k in facts["children"]:  # type: ignore[attr-defined]
        held = "both" if k["in_a"] and k["in_b"] else ("A only" if k["in_a"] else "B only")
        delta = k["mean_delta"]
        rows.append([k["move"], f"{k['nb_visit_a']:,}", f"{k['nb_visit_b']:,}", f"{k['visit_delta']:+,}",
                     _num(k["mean_a"]), _num(k["mean_b"]), "-" if delta is None else f"{delta:+.3f}", held])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines.append("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


@click.command(cls=ExampleLast)
@click.argument("a", type=click.Path(dir_okay=False))
@click.argument("b", type=click.Path(dir_okay=False))
@path_option
@json_option
@library_errors
def diff(a: str, b: str, path: str, as_json: bool) -> None:
    """Compare two trees of one game (databases A and B) aligned by move path.

    Nodes only in A and only in B (in the subtree at --path), the difference of
    visits there, both principal variations and where they part, and per move
    at --path both trees' visits and means. Both files are only read.

    \b
    Example:
      treelab diff seed1.db seed2.db --path 44 --json
    """
    from ..analysis.compare import diff as compare

    facts = compare(a, b, path or None).to_dict()
    click.echo(json.dumps(facts) if as_json else describe_diff(facts))


COMMANDS = [serve, diff]
