"""A minimal Neovim UI for the end-to-end test: Neovim runs with ``--embed`` and this client
attaches as its screen (``nvim_ui_attach``, RGB, line grid, floats composed by Neovim;
messages are external, so no hit-enter prompt waits for a key), keeps
the grid it is sent, and saves it whenever the test script asks (``vim.rpcnotify(0,
'flydsl_screen', name)``): each cell's text and colours, as JSON, and as an HTML page that
``render_png`` turns into the screenshots of docs/editors/neovim.md.

A headless Neovim draws nothing, so the screenshots need a UI; this is the smallest one, not
a terminal emulator: the ``redraw`` events of Neovim's UI protocol (``:help ui-linegrid``).
"""

from __future__ import annotations

import html
import json
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

SCREEN_EVENT = "flydsl_screen"


@dataclass
class Grid:
    width: int = 0
    height: int = 0
    cells: list[list[list]] = field(default_factory=list)  # [text, hl id] per cell

    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells = [[[" ", 0] for _ in range(width)] for _ in range(height)]

    def clear(self) -> None:
        self.resize(self.width, self.height)

    def line(self, row: int, col: int, cells: list) -> None:
        hl = 0
        for cell in cells:
            text = cell[0]
            if len(cell) > 1:
                hl = cell[1]
            for _ in range(cell[2] if len(cell) > 2 else 1):
                if 0 <= row < self.height and 0 <= col < self.width:
                    self.cells[row][col] = [text, hl]
                col += 1

    def scroll(self, top: int, bottom: int, left: int, right: int, rows: int) -> None:
        """``grid_scroll``: the region's lines move up by ``rows`` (down when negative); the
        lines left behind keep their old cells (Neovim redraws them)."""
        span = range(top, bottom - rows) if rows > 0 else range(bottom - 1, top - rows - 1, -1)
        for row in span:
            self.cells[row][left:right] = [list(c) for c in self.cells[row + rows][left:right]]


class Screen:
    """Neovim's screen as its UI events leave it, saved into ``folder`` when asked."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.grid = Grid()
        self.attrs: dict[int, dict] = {0: {}}
        self.colors = {"foreground": 0xFFFFFF, "background": 0x000000, "special": 0xFF0000}
        self.saved: list[str] = []

    def redraw(self, batches: list) -> None:
        for batch in batches:
            name, *calls = batch
            name = name.decode() if isinstance(name, bytes) else name
            for args in calls:
                if name == "grid_resize":
                    self.grid.resize(args[1], args[2])
                elif name == "grid_clear":
                    self.grid.clear()
                elif name == "grid_line":
                    self.grid.line(args[1], args[2], args[3])
                elif name == "grid_scroll":
                    self.grid.scroll(args[1], args[2], args[3], args[4], args[5])
                elif name == "hl_attr_define":
                    self.attrs[args[0]] = {_text(k): v for k, v in args[1].items()}
                elif name == "default_colors_set":
                    for key, value in zip(("foreground", "background", "special"), args[:3]):
                        if value >= 0:
                            self.colors[key] = value

    def save(self, name: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        rows = [["".join(text for text, _ in row), [hl for _, hl in row]] for row in self.grid.cells]
        (self.folder / f"{name}.json").write_text(
            json.dumps({"colors": self.colors, "attrs": self.attrs, "rows": rows}), encoding="utf-8"
        )
        (self.folder / f"{name}.html").write_text(self.html(), encoding="utf-8")
        self.saved.append(name)

    def text(self) -> list[str]:
        return ["".join(text for text, _ in row) for row in self.grid.cells]

    def html(self) -> str:
        out = []
        for row in self.grid.cells:
            spans, run, style = [], "", None
            for text, hl in row:
                now = self._style(self.attrs.get(hl, {}))
                if now != style and run:
                    spans.append(f'<span style="{style}">{html.escape(run)}</span>')
                    run = ""
                style = now
                run += text or ""
            if run:
                spans.append(f'<span style="{style}">{html.escape(run)}</span>')
            out.append("<div>" + "".join(spans) + "</div>")
        fg, bg = _hex(self.colors["foreground"]), _hex(self.colors["background"])
        # each row one cell high, its spans filling it (inline backgrounds would leave gaps)
        return (
            "<!doctype html><meta charset=utf-8><style>body{margin:0;padding:6px;background:" + bg + "}"
            "div{height:17px;white-space:pre;font:14px 'DejaVu Sans Mono',monospace;color:" + fg + "}"
            "span{display:inline-block;height:17px;line-height:17px;vertical-align:top}"
            "</style>" + "".join(out)
        )

    def _style(self, attr: dict) -> str:
        fg = attr.get("foreground", self.colors["foreground"])
        bg = attr.get("background", self.colors["background"])
        if attr.get("reverse"):
            fg, bg = bg, fg
        parts = [f"color:{_hex(fg)}", f"background:{_hex(bg)}"]
        if attr.get("bold"):
            parts.append("font-weight:bold")
        if attr.get("italic"):
            parts.append("font-style:italic")
        lines = list(dict.fromkeys(css for key, css in _LINES if attr.get(key)))
        if lines:
            wavy = " wavy" if attr.get("undercurl") else ""
            parts.append(f"text-decoration:{' '.join(lines)}{wavy} {_hex(attr.get('special', fg))}")
        return ";".join(parts)


_LINES = (("underline", "underline"), ("undercurl", "underline"), ("strikethrough", "line-through"))


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _hex(rgb: int) -> str:
    return f"#{rgb:06x}"


class EmbeddedNeovim:
    """``nvim --embed ARGS`` with this client attached as its UI (``width`` x ``height``);
    ``wait`` returns when Neovim exits."""

    def __init__(self, nvim: str, args: list[str], screens: Path, width: int, height: int, **popen):
        self.screen = Screen(screens)
        self.proc = subprocess.Popen([nvim, "--embed", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen)
        self.errors: list[str] = []
        self.proc.stdin.write(msgpack.packb([0, 1, "nvim_ui_attach", [width, height, {"rgb": True, "ext_linegrid": True, "ext_messages": True}]]))
        self.proc.stdin.flush()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        while chunk := self.proc.stdout.read1(65536):
            unpacker.feed(chunk)
            for message in unpacker:
                if message[0] == 1 and message[2] is not None:  # a response carrying an error
                    self.errors.append(str(message[2]))
                elif message[0] == 2 and message[1] == "redraw":
                    self.screen.redraw(message[2])
                elif message[0] == 2 and message[1] == SCREEN_EVENT:
                    self.screen.save(message[2][0])

    def wait(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.stdin.close()
        self.reader.join(10)
        return code


def render_png(page: Path, png: Path, chromium: str, width: int, height: int) -> None:
    """The HTML screen as a PNG, by a headless Chromium."""
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )
