"""Which files of a folder are read as text, one walk for every verb (``chunk``, ``segment``, ``ingest``,
Ray's ``ingest``): the names that say text, in sorted order, recursively — never the hidden ones.

Why hidden files and folders are left out: ``.git``, ``.venv``, ``.pytest_cache`` or an editor's
``.obsidian`` are no one's documents, yet hold text-named files (a virtualenv's ``dist-info/*.txt``,
``LICENSE.md``...): ``logichunk ingest .`` in a project stored hundreds of them. Not walking them also
keeps a walk of a repository from reading every object of its ``.git``. What was left out is said by the
verbs in one line (:func:`hidden_summary`), as the files whose names are not of text are
(:func:`skipped_summary`); a file named on the command line is read whatever its name."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from .decode import text_file_name

__all__ = ["TEXT_SUFFIXES", "dangling_summary", "hidden_summary", "skipped_summary", "special_kind", "unreadable_line",
           "walk_text_files"]

#: the file endings every verb reads from a folder (``chunk``, ``segment``, ``ingest``, the MCP ``add_file``): one
#: list, so a folder chunked and then ingested is the same files (ingest once read 6 of chunk's 12, for no reason
#: written down: the store keeps any text)
TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst", ".text", ".org", ".tex", ".html", ".htm", ".csv", ".json", ".pdf")


def walk_text_files(folder: Path, suffixes: tuple[str, ...], *, skipped: list[Path] | None = None,
                    hidden: list[Path] | None = None, unreadable: list[OSError] | None = None,
                    dangling: list[Path] | None = None) -> Iterator[Path]:
    """The files under ``folder`` whose names end in one of ``suffixes`` (or one of them and a compression
    suffix), sorted, not entering hidden folders nor reading hidden files (those go to ``hidden``). The other
    files go to ``skipped``; the error of a folder that could not be listed (permission denied) to
    ``unreadable`` (None: the walk passes over it). A link to a folder is followed, as a link to a file is read
    (``kb/shared -> ~/shared``: its files were left out unsaid), each real folder entered once (a link to a
    folder already walked, or to one above it, is not entered again: a loop). A link that leads to no file (its
    target gone, a drive not mounted, a loop) goes to ``dangling`` when given (None: it is listed, and its reading
    says why it cannot be read): a folder synced daily may keep one on purpose, and it is no file refused."""
    entered = {os.path.realpath(folder)}
    for root, dirs, files in os.walk(folder, onerror=None if unreadable is None else unreadable.append,
                                     followlinks=True):
        if hidden is not None:
            hidden.extend(Path(root) / d for d in sorted(dirs) if d.startswith("."))
        dirs[:] = [d for d in sorted(dirs) if not d.startswith(".") and _first_entry(os.path.join(root, d), entered)]
        for f in sorted(files):
            if f.startswith("."):
                if hidden is not None:
                    hidden.append(Path(root) / f)
            elif text_file_name(f, suffixes):
                if dangling is not None and os.path.islink(os.path.join(root, f)) and \
                        not os.path.exists(os.path.join(root, f)):
                    dangling.append(Path(root) / f)
                    continue
                kind = special_kind(os.path.join(root, f))
                if not kind:
                    yield Path(root) / f
                elif unreadable is not None:  # (a named pipe: reading it waited for a writer for good)
                    unreadable.append(OSError(errno.EINVAL, f"{kind}, not a regular file", str(Path(root) / f)))
            elif skipped is not None:
                skipped.append(Path(root) / f)


def special_kind(path: str | os.PathLike[str]) -> str:
    """What a path is when it is there and not a regular file (links followed): ``"a named pipe"``, ``"a
    socket"``, ``"a device"``; else "". Why: a walk read a named pipe with a text name (``notes.txt``) and waited
    for a writer for good, the ingest hung; a file an ingest is given is read twice (checked, then stored), which
    a pipe cannot give."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # (not there, a dangling link, no permission: the reading says so)
        return ""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return ""
    return ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")


def _first_entry(folder: str, entered: set[str]) -> bool:
    """Whether a walk enters ``folder``: not when its real path was entered already (reached again through a
    link), which also stops a link to a folder above it from looping."""
    real = os.path.realpath(folder)
    if real in entered:
        return False
    entered.add(real)
    return True


def skipped_summary(skipped: list[str] | tuple[str, ...], verb: str = "ingest") -> str:
    """One line on the files a folder walk left out, counted by suffix (``12 .gz, 3 without a suffix``)."""
    counts: dict[str, int] = {}
    for f in skipped:
        suffix = Path(f).suffix.lower() or "without a suffix"
        counts[suffix] = counts.get(suffix, 0) + 1
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return (f"{len(skipped)} file(s) in the folders skipped, their names not of text files ({kinds}); name a "
            f"file to {verb} it anyway")


def hidden_summary(hidden: list[str] | tuple[str, ...], verb: str = "ingest") -> str:
    """One line on the hidden files and folders a walk did not enter, the first few named."""
    names = [Path(h).name + ("/" if os.path.isdir(h) else "") for h in hidden]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f"{len(hidden)} hidden file(s) or folder(s) in the folders not read ({shown}); name a file to "
            f"{verb} it anyway")


def dangling_summary(dangling: list[str] | tuple[str, ...]) -> str:
    """One line on the links in the folders that lead to no file, the first few named with their targets."""
    def shown(p: str) -> str:
        try:
            return f"{p} -> {os.readlink(p)}"
        except OSError:
            return p
    names = ", ".join(map(shown, dangling[:3])) + (f" and {len(dangling) - 3} more" if len(dangling) > 3 else "")
    return f"{len(dangling)} symbolic link(s) in the folders lead to no file, not read ({names})"


def unreadable_line(e: OSError) -> str:
    """The one line saying a folder could not be listed, or a file of it not read (:func:`special_kind`)."""
    why = "permission denied" if isinstance(e, PermissionError) else (e.strerror or type(e).__name__)
    return f"{e.filename}: {why}; " + ("not read" if e.errno == errno.EINVAL else "its files were not read")
