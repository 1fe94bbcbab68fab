"""Which upstream row a release record is about: its question text (and its answer and answer choices where
the record carries them) against the rows of a VQA table, both normalised the same way.

Normalised means: lower case, white space collapsed, the image tags `<image>` and `<|image_N|>` dropped, and
a trailing "Choices: ..." list dropped from a question (the release may append the choices to the text, the
upstream table keeps them in a column). An answer also loses a leading choice letter ("B. ", "b) ").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from preprocess.formats import textparse

_TAGS = re.compile(r"<image>|<\|image_\d+\|>", re.IGNORECASE)
_CHOICES = re.compile(r"\s*\bchoices\s*:.*$", re.IGNORECASE | re.DOTALL)
_LETTER = re.compile(r"^\(?[a-z][.)]\s+")
_SPACE = re.compile(r"\s+")


def normal_text(text) -> str:
    return _SPACE.sub(" ", _TAGS.sub(" ", str(text))).strip().lower()


def normal_question(text) -> str:
    return normal_text(_CHOICES.sub("", _TAGS.sub(" ", str(text))))


def normal_answer(text) -> str:
    return _LETTER.sub("", normal_text(text))


@dataclass(frozen=True)
class Query:
    """What a record says about its upstream item."""

    question: str
    answer: str | None = None
    choices: frozenset[str] | None = None

    def shown(self) -> str:
        parts = [f"question {self.question!r}"]
        if self.answer is not None:
            parts.append(f"answer {self.answer!r}")
        if self.choices is not None:
            parts.append(f"choices {sorted(self.choices)}")
        return ", ".join(parts)


@dataclass(frozen=True)
class RowText:
    """What an upstream row says: its question, the answers it accepts, its choices (None: not a choice)."""

    question: str
    answers: frozenset[str]
    choices: frozenset[str] | None = None


def fits(query: Query, row: RowText) -> bool:
    """The row is the record's item as far as the record tells: same question, and the same answer and
    choices where both carry them."""
    if query.question != row.question:
        return False
    if query.answer is not None and query.answer not in row.answers:
        return False
    return query.choices is None or row.choices is None or query.choices == row.choices


def _content(message) -> str | None:
    """The text of a chat message: a string, or the text parts of a list of parts."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content if isinstance(content, str) else None


def task_query(record: dict) -> Query | None:
    """A test record (image_qa): the question is qry_text; tgt_text[0] is the answer (the evaluation's label)
    and a list of several candidates is the answer choices."""
    question, targets = record.get("qry_text"), record.get("tgt_text")
    if not isinstance(question, str) or not normal_question(question):
        return None
    if isinstance(targets, str):
        targets = [targets]
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
        return Query(normal_question(question))
    choices = frozenset(normal_answer(t) for t in targets) if len(targets) > 1 else None
    return Query(normal_question(question), normal_answer(targets[0]), choices)


def train_query(record: dict) -> Query | None:
    """A Train_Data record: the question is the last user message, the answer the last message of the first
    positive conversation."""
    users = [m for m in record.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    question = _content(users[-1]) if users else None
    if question is None or not normal_question(question):
        return None
    answer = None
    positives = record.get("positive_messages")
    if isinstance(positives, list) and positives and isinstance(positives[0], list) and positives[0]:
        answer = _content(positives[0][-1])
    return Query(normal_question(question), None if answer is None else normal_answer(answer))


def _metadata(value) -> dict:
    """The metadata struct, which some copies store as a JSON string."""
    if isinstance(value, str):
        try:
            value = textparse.json_value(value, "the metadata column")
        except textparse.TextError:
            return {}
    return value if isinstance(value, dict) else {}


def benchmark_row(fields: dict) -> RowText:
    """RadImageNet-VQA's benchmark config: question, choices (a list, or None), answer (a letter for a
    multiple-choice row), metadata.correct_text."""
    choices = fields.get("choices")
    answers = {normal_answer(fields.get("answer") or "")}
    correct = _metadata(fields.get("metadata")).get("correct_text")
    if correct:
        answers.add(normal_answer(correct))
    letter = str(fields.get("answer") or "").strip().upper()
    if choices and len(letter) == 1 and 0 <= ord(letter) - ord("A") < len(choices):
        answers.add(normal_answer(choices[ord(letter) - ord("A")]))
    shown = frozenset(normal_answer(c) for c in choices) if choices else None
    return RowText(normal_question(fields.get("question") or ""), frozenset(answers - {""}), shown)


def conversation_row(fields: dict) -> RowText:
    """RadImageNet-VQA's alignment config: one human turn (the prompt) and one gpt turn (the caption)."""
    turns = fields.get("conversations") or []
    said = {t.get("from"): t.get("value") for t in reversed(turns) if isinstance(t, dict)}
    return RowText(normal_question(said.get("human") or ""), frozenset({normal_answer(said.get("gpt") or "")}))


def plain_row(fields: dict) -> RowText:
    """PathVQA, VQA-RAD, MedPix: question and answer columns."""
    return RowText(
        normal_question(fields.get("question") or ""), frozenset({normal_answer(fields.get("answer") or "")})
    )
