"""Progress displays for a run: rich bars or plain lines on a console, a table in Jupyter.

A display is what :func:`quadriga.runner.execute` takes as ``display``: ``display(stage)`` is a
context manager yielding the stage's ``on_update(completed, total, description)``.

- :func:`rich_progress`: rich's bars on a terminal, or one line per finished stage (and, with
  ``lines``, a plain progress line now and then) for logs and pipes; ``quadriga run`` uses it;
- :class:`JupyterProgress`: one table of bars updated in place in a notebook cell;
- :class:`SummaryLine`: nothing while the run goes, one line when it ends, for a notebook run
  without anyone watching (nbclient, papermill, CI);
- :func:`progress_display`: the choice :func:`quadriga.api.run` makes from its ``progress``.

This is the one progress-display module: the command line imports it, never the reverse. It
imports rich only when a display is made, and nothing above the run layer.
"""

from __future__ import annotations

import contextlib
import io
import math
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "JupyterProgress",
    "OnUpdate",
    "SummaryLine",
    "figure_png",
    "in_jupyter",
    "interactive_kernel",
    "progress_display",
    "rich_progress",
    "show_figures_inline",
]

#: what a progress display gives each stage: ``on_update(completed, total, description)``
OnUpdate = Callable[[float, "float | None", "str | None"], None]


@contextlib.contextmanager
def rich_progress(
    con: Console,
    enabled: bool,
    *,
    lines: bool = False,
    min_interval: float = 10.0,
    max_interval: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Callable[[str], contextlib.AbstractContextManager[OnUpdate]]]:
    """A rich progress display; yields ``display(stage)``, a context manager giving the stage's ``on_update``.

    Args:
        con: where to print.
        enabled: draw bars; when false only one line per finished or stopped stage is printed
            (``  stage NAME done in 12.3 s``).
        lines: with ``enabled`` false, also print a plain progress line now and then while a long
            stage runs (:class:`~quadriga.progress.ProgressLines`: at most one per ``min_interval``
            seconds, one per 10 % of a known total, at least one per ``max_interval``); for logs
            and pipes, where bars cannot be drawn.
        min_interval: seconds, see ``lines``.
        max_interval: seconds, see ``lines``.
        clock: the monotonic clock of the progress lines and stage times (tests pass a fake one).
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from quadriga.markup import escape
    from quadriga.progress import ProgressLines

    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=con,
        disable=not enabled,
        transient=False,
    )

    @contextlib.contextmanager
    def display(stage: str) -> Iterator[OnUpdate]:
        if not enabled:  # no bars: no task to keep, one line when the stage ends
            with _lines_only(stage) as on_line:
                yield on_line
            return
        task = progress.add_task(stage, total=None)

        def on_update(completed: float, total: float | None, description: str | None) -> None:
            label = stage if not description or description == stage else f"{stage}: {description}"
            progress.update(task, completed=completed, total=total, description=label)

        try:
            yield on_update
        except BaseException:
            progress.update(task, description=f"{stage} (stopped)")
            raise
        t = progress.tasks[task] if task < len(progress.tasks) else None
        if t is not None and t.total is None:
            progress.update(task, total=1, completed=1)
        elif t is not None:
            progress.update(task, completed=t.total)

    @contextlib.contextmanager
    def _lines_only(stage: str) -> Iterator[OnUpdate]:
        start = clock()
        plain = (
            ProgressLines(
                stage,
                lambda text: con.print(text, markup=False, highlight=False, soft_wrap=True),
                min_interval=min_interval,
                max_interval=max_interval,
                clock=clock,
                width=max(40, min(con.width, 100)),
            )
            if lines
            else None
        )

        def on_update(completed: float, total: float | None, description: str | None) -> None:
            if plain is not None:
                plain(completed, total, description)

        try:
            yield on_update
        except BaseException:
            con.print(f"  stage [bold]{escape(stage)}[/] stopped")
            raise
        con.print(f"  stage [bold]{escape(stage)}[/] done in {clock() - start:.1f} s")

    with progress:
        yield display


def in_jupyter() -> bool:
    """Whether this process is a Jupyter kernel (notebook, JupyterLab, VS Code, Colab).

    A terminal IPython session is not: it gets the terminal's bars. IPython is never imported
    here; a process that has not imported it is not a kernel.
    """
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    if shell is None:
        return False
    return type(shell).__name__ == "ZMQInteractiveShell" or "google.colab" in str(type(shell))


def _shell() -> Any:
    """The running IPython shell, or ``None`` (IPython is never imported here)."""
    get = getattr(sys.modules.get("IPython"), "get_ipython", None)
    return get() if callable(get) else None


def interactive_kernel() -> bool:
    """Whether the current Jupyter cell was sent by a frontend a person is watching.

    A notebook executed by nbclient (``jupyter nbconvert --execute``, papermill, CI) sends its
    cells with ``allow_stdin`` false: nobody can answer ``input()``, and nobody watches progress
    bars, whose every redraw such a run stores as one more output. JupyterLab, Notebook, VS Code
    and Colab send cells with ``allow_stdin`` true. Outside a kernel, or when the kernel does not
    say, this is ``True``.
    """
    kernel = getattr(_shell(), "kernel", None)
    return bool(getattr(kernel, "_allow_stdin", True))


def figure_png(fig: Any, dpi: int = 100) -> bytes:
    """A matplotlib figure as PNG bytes (drawn with the Agg canvas, whatever pyplot's backend)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def show_figures_inline() -> bool:
    """Let Jupyter show a ``matplotlib.figure.Figure`` as a PNG without pyplot being imported.

    Evaluators draw with matplotlib's object API (``Figure()``, no pyplot), and such a figure
    has no PNG view until pyplot's inline backend is loaded: ``metrics.figures["samples"]``
    would show ``<Figure size ...>``. This registers :func:`figure_png` with the kernel's PNG
    formatter, by class name (matplotlib is not imported). A formatter the inline backend
    registers for the class takes precedence (its settings are the user's). Called when this
    module is imported (by :mod:`quadriga.api` and :mod:`quadriga.notebook`) inside a Jupyter
    kernel; idempotent. The artifacts themselves never import it (a low layer does not import
    presentation).

    Returns:
        Whether a kernel's formatter was found.
    """
    shell = _shell()
    if shell is None or not in_jupyter():
        return False
    formatter = getattr(getattr(shell, "display_formatter", None), "formatters", {}).get("image/png")
    if formatter is None:
        return False
    formatter.for_type_by_name("matplotlib.figure", "Figure", figure_png)
    return True


def _ipython_show(bundle: dict[str, str]) -> Any:
    """Display a MIME bundle in the cell's output; return a handle whose ``update`` redraws it."""
    import importlib

    display = importlib.import_module("IPython.display").display
    return display(bundle, raw=True, display_id=True)


#: how the bars' HTML is wrapped (the same ``<pre>`` block rich uses for its Jupyter output)
_HTML = (
    '<pre style="white-space:pre;overflow-x:auto;line-height:normal;'
    "font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace\">{code}</pre>"
)


class JupyterProgress:
    """Progress bars for :func:`quadriga.api.run` in a notebook: one table, one row per stage.

    The table is drawn by rich's progress columns (stage, bar, count, elapsed, remaining) and
    shown as one HTML output (with a plain-text twin) updated in place through an IPython display
    handle, so it needs neither a terminal nor ipywidgets. It is an ``execute(display=...)``
    factory: ``display(stage)`` is a context manager yielding the stage's ``on_update``.

    Args:
        show: ``show(bundle) -> handle`` displays a MIME bundle (``{"text/plain": ..., "text/html":
            ...}``) and returns a handle with ``update(bundle, raw=True)``; default IPython's
            ``display(bundle, raw=True, display_id=True)``.
        min_refresh: seconds between two redraws while a stage runs (the state at the end of each
            stage is always drawn).
        width: columns of the table.
        clock: a monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(
        self,
        *,
        show: Callable[[dict[str, str]], Any] | None = None,
        min_refresh: float = 0.2,
        width: int = 100,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._show = show or _ipython_show
        self._handle: Any = None
        self.min_refresh, self.width, self.clock = min_refresh, width, clock
        self._last = -math.inf
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=io.StringIO()),
            disable=True,
            auto_refresh=False,
        )

    def render(self) -> dict[str, str]:
        """The table now, as a MIME bundle (``text/plain`` and ``text/html``)."""
        from rich.console import Console

        con = Console(
            record=True, file=io.StringIO(), width=self.width, force_terminal=True, color_system="truecolor"
        )
        con.print(self.progress.make_tasks_table(self.progress.tasks))
        html = con.export_html(inline_styles=True, code_format=_HTML, clear=False)
        return {"text/plain": con.export_text().rstrip("\n"), "text/html": html}

    def refresh(self, force: bool = False) -> None:
        """Redraw the table if ``min_refresh`` seconds have passed (or ``force``)."""
        now = self.clock()
        if not force and now - self._last < self.min_refresh:
            return
        self._last = now
        bundle = self.render()
        if self._handle is None:
            self._handle = self._show(bundle)
        elif hasattr(self._handle, "update"):
            self._handle.update(bundle, raw=True)

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[Callable[[float, float | None, str | None], None]]:
        """A context manager for one stage, yielding its ``on_update(completed, total, description)``."""
        task = self.progress.add_task(stage, total=None)

        def on_update(completed: float, total: float | None, description: str | None) -> None:
            label = stage if not description or description == stage else f"{stage}: {description}"
            self.progress.update(task, completed=completed, total=total, description=label)
            self.refresh()

        try:
            yield on_update
        except BaseException:
            self.progress.update(task, description=f"{stage} (stopped)")
            self.progress.stop_task(task)
            self.refresh(force=True)
            raise
        done = self.progress.tasks[task]
        total = done.total if done.total is not None else max(done.completed, 1)
        self.progress.update(task, total=total, completed=total, description=f"{stage} (done)")
        self.progress.stop_task(task)
        self.refresh(force=True)


class SummaryLine:
    """One line when a long operation ends, nothing while it runs: for unattended notebooks.

    A notebook executed by nbclient or papermill stores every redraw of a progress bar as one
    more output; this display stores one line instead, written when the block ends::

        run gmm-demo: 3 stages in 3 min 05 s
        run gmm-demo: stopped in stage 'mala' after 1 of 2 stages, 41 s

    It is an ``execute(display=...)`` factory (``display(stage)`` is a context manager yielding
    the stage's ``on_update``) and a context manager around the whole operation, whose exit
    writes the line. Stages reloaded by ``--resume`` are not counted (they did not run).

    Args:
        what: the operation, e.g. ``"run gmm-demo"``.
        write: called once with the line (no trailing newline); default: print to stdout.
        clock: a monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(
        self,
        what: str,
        *,
        write: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.clock = what, clock
        self.write = write or (lambda text: print(text, flush=True))
        self.began = clock()
        self.done = 0
        self.stopped: str | None = None

    def __enter__(self) -> SummaryLine:
        """Start the clock of the operation."""
        self.began = self.clock()
        return self

    def __exit__(self, *exc: object) -> None:
        """Write the summary line, whether the block ended or raised."""
        self.write(self.line())

    def line(self) -> str:
        """The summary line now (the time counted from entering the block)."""
        from quadriga.progress import format_seconds

        took = format_seconds(self.clock() - self.began)
        if self.stopped is not None:
            ran = self.done + 1
            return (
                f"{self.what}: stopped in stage '{self.stopped}' after {self.done} of {ran} "
                f"stage{'s' if ran != 1 else ''}, {took}"
            )
        return f"{self.what}: {self.done} stage{'s' if self.done != 1 else ''} in {took}"

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[OnUpdate]:
        """A context manager for one stage, yielding an ``on_update`` that draws nothing."""
        try:
            yield lambda completed, total, description: None
        except BaseException:
            self.stopped = stage
            raise
        self.done += 1


def progress_display(progress: bool | None, what: str = "run") -> contextlib.AbstractContextManager[Any]:
    """The progress display :func:`quadriga.api.run` passes to the runner, as a context manager.

    Args:
        progress: ``None`` (default of ``run``): bars in Jupyter (:class:`JupyterProgress`), one
            summary line at the end in a notebook executed without a person watching (nbclient,
            papermill, ``nbconvert --execute``: :func:`interactive_kernel`;
            :class:`SummaryLine`), nothing elsewhere; ``True``: bars in Jupyter, else rich's
            bars on a terminal's stderr, else plain progress lines on stderr (as ``quadriga run``
            prints to a log); ``False``: nothing.
        what: the operation, for the summary line (``"run gmm-demo"``).

    Returns:
        A context manager yielding ``display`` for ``execute(display=...)`` (``None`` for nothing).
    """
    show_figures_inline()
    if progress is False:
        return contextlib.nullcontext(None)
    if progress is None and in_jupyter() and not interactive_kernel():
        return SummaryLine(what)
    if progress is None and not in_jupyter():
        return contextlib.nullcontext(None)
    if in_jupyter():
        return contextlib.nullcontext(JupyterProgress())
    from rich.console import Console

    con = Console(stderr=True, highlight=False)
    return rich_progress(con, con.is_terminal, lines=not con.is_terminal)


show_figures_inline()  # inside a Jupyter kernel: figures show as PNGs from the first import on
