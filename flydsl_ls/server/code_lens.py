"""textDocument/codeLens: "Compile (gfx942)", "Show ISA", "Launch" above each
``# flydsl: example`` function, each carrying its command (server/commands.py); after a
compile of the file, each kernel's resources above its definition ("add_kernel_0 (gfx942):
VGPRs 17, ..."; clicked, Show ISA); "Add compile
example" above each kernel builder or ``@flyc.jit`` launcher that no example names yet
(``flydsl-ls.addExample``, the code action of server/code_actions.py); "Migrate this kernel"
above each module-level kernel, launcher or builder whose scope has a fixable finding in the
document's current lint (``flydsl-ls.migrateKernel``, server/migrate.py), after a lens counting
its legacy findings ("12 legacy constructs, 9 fixable (5 safe, 4 unsafe)", on every kernel
that has some). A file with neither
an example nor a builder or launcher, but with ``@flyc.jit`` functions or a ``.launch(...)``,
gets one lens saying why ("No compile example: no launcher found: ...",
``scaffold_reasons.no_target``): no diagnostic, the file is not wrong.

The examples are found from the buffer's tokens and syntax tree (``find_examples``), the
builders from its syntax tree on a worker thread (``scaffold.targets``): asking for lenses
never imports the file. The arch is the marker's, else the ``target-arch``
setting, else gfx942. In a workspace the client calls untrusted (setting ``trust: false``)
the Compile/Show ISA/Launch lenses are not offered.
"""

from __future__ import annotations

import asyncio
import re

from lsprotocol import types

from flydsl_ls.actions.migrate import Kernel, Tally, tallies, with_fix
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.compile import find_examples
from flydsl_ls.compile.scaffold import Target, targets
from flydsl_ls.compile.scaffold_reasons import NoTarget, no_target
from flydsl_ls.server import diagnostics, schedule
from flydsl_ls.server.client import Client
from flydsl_ls.server.commands import Command
from flydsl_ls.server.edits import lsp_range
from flydsl_ls.server.session import Document, Session, Snapshot
from flydsl_ls.server.work import target_arch

MARKER = re.compile(r"flydsl:\s*example", re.I)  # a cheap test before tokenizing the file
# (title, command); the compile title names the arch.
LENSES = (("Compile ({arch})", Command.COMPILE), ("Show ISA", Command.SHOW_ISA), ("Launch", Command.LAUNCH))
ADD_EXAMPLE_TITLE = "Add compile example"
NO_TARGET_TITLE = "No compile example: {reason}"
MIGRATE_TITLE = "Migrate this kernel"
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)


async def code_lens(session: Session, client: Client, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    doc = session.get(params.text_document.uri)
    if doc is None:
        return None
    examples = find_examples(doc.text) if MARKER.search(doc.text) else []
    # An untrusted workspace (setting `trust`): no lens that would run its code.
    runs_code = session.editor.trust is not False
    lenses = _example_lenses(session, doc, examples) if runs_code else []
    lenses += _resource_lenses(session, doc)
    if "jit" in doc.text or ".launch(" in doc.text:  # cheap tests before parsing, which is done off the loop
        snap = session.snapshot(doc)
        found, reason = await asyncio.get_running_loop().run_in_executor(schedule.ACTIONS, lens_targets, snap)
        if doc.version == snap.version:  # else the client asks again for the new text
            lenses += _add_example_lenses(session, doc, found)
            if reason is not None and not examples:
                lenses.append(_no_target_lens(session, doc, reason))
    if "kernel" in doc.text or "jit" in doc.text:
        lenses += await _migrate_lenses_of(session, doc)
    return lenses


async def _migrate_lenses_of(session: Session, doc: Document) -> list[types.CodeLens]:
    """"Migrate this kernel" on the kernels with a fixable finding in the current lint (linted
    now if there is none yet: the lint the client gets anyway)."""
    analysis = doc.current(session.generation) or await diagnostics.analyse(session, doc)
    if analysis is None or analysis.version != doc.version:
        return []
    snap = session.snapshot(doc, analysis.text, analysis.version)
    loop = asyncio.get_running_loop()
    found, counted = await loop.run_in_executor(schedule.ACTIONS, migrate_targets, snap, analysis.result.diagnostics)
    if doc.version != snap.version:
        return []
    return _summary_lenses(session, doc, counted) + _migrate_lenses(session, doc, found)


def migrate_targets(snap: Snapshot, diagnostics) -> tuple[list[Kernel], list[tuple[Kernel, Tally]]]:
    """The kernels of the snapshot's text with a fixable finding in their scope, and every
    kernel's count of legacy findings (worker thread)."""
    return with_fix(snap.text, diagnostics), tallies(snap.text, diagnostics)


def _summary_lenses(session: Session, doc: Document, counted: list[tuple[Kernel, Tally]]) -> list[types.CodeLens]:
    """"12 legacy constructs, 9 fixable (5 safe, 4 unsafe)" on each kernel with findings, next
    to its "Migrate this kernel": which kernel of a long file to migrate first. Clicked, it
    says which rules they are (``flydsl-ls.kernelFindings``)."""
    lenses = []
    for kernel, tally in counted:
        line = kernel.first_line - 1
        whole = Range(Position(line, 0), Position(line, len(doc.index.line_text(line))))
        title = tally.summary()
        detail = f"{kernel.name}: {title}: {tally.details()}"
        if tally.fixable:
            detail += "; \"Migrate this kernel\" applies the fixable ones"
        command = types.Command(title=title, command=Command.KERNEL_FINDINGS.value, arguments=[detail])
        lenses.append(types.CodeLens(range=lsp_range(whole, doc.index, session.encoding), command=command))
    return lenses


def _migrate_lenses(session: Session, doc: Document, found: list[Kernel]) -> list[types.CodeLens]:
    lenses = []
    for kernel in found:
        line = kernel.first_line - 1
        whole = Range(Position(line, 0), Position(line, len(doc.index.line_text(line))))
        command = types.Command(title=MIGRATE_TITLE, command=Command.MIGRATE_KERNEL.value, arguments=[doc.uri, doc.version, kernel.name])
        lenses.append(types.CodeLens(range=lsp_range(whole, doc.index, session.encoding), command=command))
    return lenses


def lens_targets(snap: Snapshot) -> tuple[list[Target], NoTarget | None]:
    """The builders and launchers of the snapshot's text that no example names yet, and why
    there are none when there are none in a kernel-like file (worker thread)."""
    found = targets(snap.text)
    reason = None if found else no_target(snap.text)
    return [t for t in found if not t.has_example], reason if reason and reason.kernel_like else None


def _no_target_lens(session: Session, doc: Document, reason: NoTarget) -> types.CodeLens:
    """A lens that says why; clicked, it says what to do."""
    line = reason.line - 1
    whole = Range(Position(line, 0), Position(line, len(doc.index.line_text(line))))
    title = NO_TARGET_TITLE.format(reason=reason.message)
    return types.CodeLens(range=lsp_range(whole, doc.index, session.encoding), command=types.Command(title=title, command=Command.NO_EXAMPLE.value, arguments=[reason.message]))


def _add_example_lenses(session: Session, doc: Document, found: list[Target]) -> list[types.CodeLens]:
    """On each builder or launcher of ``found`` (the lens goes once it has an example)."""
    lenses = []
    for target in found:
        line = target.first_line - 1
        whole = Range(Position(line, 0), Position(line, len(doc.index.line_text(line))))
        lenses.append(
            types.CodeLens(
                range=lsp_range(whole, doc.index, session.encoding),
                command=types.Command(
                    title=ADD_EXAMPLE_TITLE, command=Command.ADD_EXAMPLE.value, arguments=[doc.uri, None, target.name]
                ),
            )
        )
    return lenses


def _resource_lenses(session: Session, doc: Document) -> list[types.CodeLens]:
    """The last compile's resources of each kernel, above its definition (``def NAME``
    where the kernel is ``NAME_0``, the longest such name); clicked, Show ISA."""
    compiled = session.compiled.get(doc.uri)
    if compiled is None:
        return []
    result = compiled.result
    defs = {match.group(1): doc.index.position_at(match.start(1)).line for match in _DEF.finditer(doc.text)}
    lenses = []
    for kernel in result.kernels:
        if kernel.resources is None:
            continue
        names = [name for name in defs if kernel.name == name or kernel.name.startswith(name + "_")]
        if not names:
            continue  # a kernel defined in another file, or renamed since
        line = defs[max(names, key=len)]
        whole = Range(Position(line, 0), Position(line, len(doc.index.line_text(line))))
        title = f"{kernel.name} ({result.arch}): {kernel.resources.summary()}"
        show = types.Command(title=title, command=Command.SHOW_ISA.value, arguments=[doc.uri, result.example, result.arch])
        lenses.append(types.CodeLens(range=lsp_range(whole, doc.index, session.encoding), command=show))
    return lenses


def _example_lenses(session: Session, doc: Document, examples) -> list[types.CodeLens]:
    default = target_arch(session, doc)
    index = doc.index
    lenses: list[types.CodeLens] = []
    for example in examples:
        # the first line of the definition: the decorator or `def` below the marker
        line = example.marker_line if example.marker_line < example.line else example.line - 1
        whole = Range(Position(line, 0), Position(line, len(index.line_text(line))))
        rng = lsp_range(whole, index, session.encoding)
        arch = example.arch or default
        for title, command in LENSES:
            lenses.append(
                types.CodeLens(
                    range=rng,
                    command=types.Command(
                        title=title.format(arch=arch),
                        command=command.value,
                        arguments=[doc.uri, example.name, arch],
                    ),
                )
            )
    return lenses
