"""Our ranges, edits and fixes as LSP's: positions only through ``LineIndex``, in the
client's encoding; a document's edits versioned when the client takes versioned edits
(``document_changes``)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from flydsl_ls.actions.elsewhere import OtherFiles
from flydsl_ls.actions.textdiff import minimal_edits
from flydsl_ls.analysis.model.diagnostic import Edit, Fix
from flydsl_ls.analysis.model.text import Encoding, LineIndex, Position, Range
from flydsl_ls.compile.scaffold import Insertion
from flydsl_ls.server.session import Snapshot


def lsp_range(rng: Range, index: LineIndex, encoding: Encoding) -> types.Range:
    start = index.to_client(rng.start, encoding)
    end = index.to_client(rng.end, encoding)
    return types.Range(types.Position(*start), types.Position(*end))


def text_edit(edit: Edit, index: LineIndex, encoding: Encoding) -> types.TextEdit:
    return types.TextEdit(range=lsp_range(edit.range, index, encoding), new_text=edit.content)


def fix_data(fix: Fix, index: LineIndex, encoding: Encoding) -> dict:
    """``fix`` as JSON, its edits in the client's encoding (verifyFix's argument)."""
    return {
        "title": fix.title,
        "applicability": fix.applicability.value,
        "edits": [
            {
                "range": _range_json(lsp_range(edit.range, index, encoding)),
                "newText": edit.content,
            }
            for edit in fix.edits
        ],
    }


def _range_json(rng: types.Range) -> dict:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def document_edit(uri: str, version: int | None, edits: list[types.TextEdit], document_changes: bool) -> types.WorkspaceEdit:
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                    edits=edits,
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: edits})


def new_file_edit(uri: str, text: str) -> types.WorkspaceEdit:
    """Create the file ``uri`` with ``text`` (the client must take ``create`` operations)."""
    insert = types.TextEdit(range=types.Range(types.Position(0, 0), types.Position(0, 0)), new_text=text)
    return types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=[insert]
            ),
        ]
    )


def minimal_edit(
    uri: str, version: int | None, text: str, new: str, encoding: Encoding, document_changes: bool, index: LineIndex | None = None
) -> types.WorkspaceEdit | None:
    """``text`` -> ``new`` as a few minimal edits; None if equal."""
    edits = minimal_edits(text, new)
    if not edits:
        return None
    index = index if index is not None else LineIndex(text)
    return document_edit(uri, version, [text_edit(e, index, encoding) for e in edits], document_changes)


def snapshot_edit(snap: Snapshot, new: str, others: OtherFiles | None = None) -> types.WorkspaceEdit | None:
    """The snapshot's text -> ``new`` as a few minimal edits on its version, with a
    document edit for each other file ``others`` changed; None if nothing changed."""
    edit = minimal_edit(snap.uri, snap.version, snap.text, new, snap.encoding, snap.document_changes, snap.index)
    for uri, version, before, after in _other_documents(snap, others) if others is not None else ():
        more = minimal_edit(uri, version, before, after, snap.encoding, snap.document_changes)
        if more is not None:
            edit = more if edit is None else _merged(edit, more)
    return edit


def _merged(a: types.WorkspaceEdit, b: types.WorkspaceEdit) -> types.WorkspaceEdit:
    if a.document_changes is not None:
        return types.WorkspaceEdit(document_changes=[*a.document_changes, *(b.document_changes or ())])
    return types.WorkspaceEdit(changes={**(a.changes or {}), **(b.changes or {})})


def _other_documents(snap: Snapshot, others: OtherFiles) -> list[tuple[str, int | None, str, str]]:
    """(uri, version or None, text, new text) of each other file the fixes edited."""
    opened = {str(Path(p).resolve()): found for p, found in snap.open_texts.items()}
    changed = []
    for path, (before, after) in others.changed().items():
        uri, _text, version = opened.get(path, (Path(path).as_uri(), before, None))
        changed.append((uri, version, before, after))
    return changed


def insertion_edit(snap: Snapshot, insertion: Insertion) -> types.TextEdit:
    """``insertion`` as a TextEdit. At the very end of a file that ends with a line end, it
    goes before that line end, its text's last line end moved to its front: Neovim takes an
    edit past its last line as new lines and would leave a blank line at the end."""
    index = snap.index or LineIndex(snap.text)
    offset = index.offset(Position(insertion.line, 0))
    text = insertion.text
    if offset == len(snap.text) and snap.text.endswith(("\n", "\r")) and text.endswith("\n"):
        offset -= 2 if snap.text.endswith("\r\n") else 1
        text = "\n" + text[:-1]
    at = types.Position(*index.to_client(index.position_at(offset), snap.encoding))
    return types.TextEdit(range=types.Range(start=at, end=at), new_text=text)
