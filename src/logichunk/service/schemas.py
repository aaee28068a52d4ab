"""Request bodies. Unknown fields are refused (a typo never silently falls back to a default), and counts and
switches are strict, as the MCP tools' arguments are: JSON's ``true`` is no size (it was read as 1), ``"100"``
no count and ``"yes"`` no switch."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator

from ..integrations.kb import MAX_TOPICS
from ..text.decode import TITLE_CHARS, check_not_blank, check_title

#: a positive count: strict (no ``true``, ``1.0`` or ``"1"``)
Count = Annotated[StrictInt, Field(gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProjectIn(_Strict):
    name: str = Field(min_length=1, max_length=100, description="letters, digits, '_', '-', '.'",
                      examples=["小说", "kb-en"])


class DocumentIn(_Strict):
    title: str = Field(min_length=1, max_length=TITLE_CHARS, examples=["桃花源记"],
                       description="stored without its surrounding whitespace")
    text: str = Field(min_length=1, description="the document; chapters start at headings, blocks at blank lines")
    source: str | None = Field(None, max_length=1000, description="where it came from (a path, a URL)")

    @field_validator("title")
    @classmethod
    def _has_title(cls, v: str) -> str:  # (a title of spaces was stored; MCP's add_document refused it)
        return check_title(v)  # (stripped: MCP's add_document stored " a " as "a", this API as given)

    @field_validator("text")
    @classmethod
    def _has_text(cls, v: str) -> str:  # (as an upload of blank lines is refused, and MCP's add_document)
        check_not_blank(v, "text")  # (an InputError is a ValueError: said as "text is only whitespace")
        return v


class BlockEdit(_Strict):
    content: str = Field(description="the block's new text (may be empty)")
    expected_revision: StrictInt | None = Field(  # (strict: "1", 2.0 and true are no revision)
        None, ge=1, description="optimistic concurrency: refuse with 409 unless the block is still at this revision")


class DocumentText(_Strict):
    text: str = Field(min_length=1, description="the document's whole new text (an editor's buffer); only the blocks "
                      "where it differs are written, and only their chapters re-chunked")
    expected_sha256: str | None = Field(
        None, pattern="^[0-9a-f]{64}$", description="optimistic concurrency: the sha256 of the text the edit started "
        "from (`sha256` of GET or of the last PUT); refuse with 409 unless the document's text still hashes to it")


class SearchIn(_Strict):
    query: str = Field(min_length=1, examples=["渔人在桃花林里看到了什么", "who wrote about the Beagle"])
    mode: str | None = Field(None, description="a retrieval mode (GET /api/info lists them); default: setting")
    top_k: StrictInt | None = Field(None, ge=1)  # (strict: JSON's true is no count)
    size_normalization: StrictBool | None = None
    context_window: StrictInt | None = Field(None, ge=1, description="characters of context around the matched child")
    include: Literal["documents", "conversations", "all"] = Field(
        "all", description="the hits kept: in documents (text added or ingested), in conversation topics archived "
                           "by the memory, or all (the default; each hit says its `origin`)")


class SegmentIn(_Strict):
    text: str = Field(min_length=1)
    units: Literal["sentences", "lines"] = Field("sentences", description="what a topic is made of: sentences, or "
                                                 "lines (one conversation turn or transcript line each)")
    topics: Count | None = Field(None, le=MAX_TOPICS, description="as many topics as this (headings still open "
                                       "topics) instead of the count the text's cohesion gives")


class ChunkIn(_Strict):
    text: str = Field(min_length=1)
    method: str = Field("logic-chain", description="GET /api/info lists the methods")
    sizes: list[Count] | None = Field(None, min_length=1, max_length=5,
                                    description="limit per level, top first (default: the method's)")
    unit: Literal["chars", "bytes", "tokens"] = "chars"
    tokenizer: str | None = Field(None, max_length=200, description="exact tokens (implies unit tokens): "
                                  "cl100k_base, o200k_base, 'embedder' (the service's embedder), or the "
                                  "server's tokenizer setting; never a path or hub id of the client's")
    similarity: StrictBool | None = Field(None, description="add the embedding similarity curve (default: when the "
                                    "method embeds anyway)")
    max_points: StrictInt = Field(4000, ge=100, le=100_000, description="at most this many points per curve")
