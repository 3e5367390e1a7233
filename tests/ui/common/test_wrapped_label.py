"""WrappedLabel: a box layout asks for all of its lines (a plain word-wrapped QLabel gives one)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.ui.common.wrapped_label import WrappedLabel

TEXT = "A learned position table of 512 rows adds one row per position: texts of up to 512 tokens. " * 3


def _page(qtbot, label: QLabel) -> QWidget:
    page = QWidget()
    qtbot.addWidget(page)
    lay = QVBoxLayout(page)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(label)
    page.resize(300, 400)
    page.show()
    qtbot.waitExposed(page)
    return page


def test_the_layouts_minimum_holds_every_wrapped_line(qtbot):
    label = WrappedLabel(TEXT)
    page = _page(qtbot, label)
    lines = label.heightForWidth(300) // label.fontMetrics().lineSpacing()
    assert lines >= 4
    qtbot.waitUntil(lambda: page.minimumSizeHint().height() >= label.heightForWidth(300))
    label.setText("short")  # fewer lines: the minimum follows the text
    qtbot.waitUntil(lambda: page.minimumSizeHint().height() < label.fontMetrics().lineSpacing() * 2)
    page.resize(600, 400)  # and the width
    label.setText(TEXT)
    qtbot.waitUntil(lambda: page.minimumSizeHint().height() == max(label.minimumSizeHint().height(),
                                                                   label.heightForWidth(600)))


def test_a_plain_wrapped_qlabel_asks_for_fewer_lines(qtbot):
    """What Qt does alone, so that the test above means something."""
    label = QLabel(TEXT)
    label.setWordWrap(True)
    page = _page(qtbot, label)
    qtbot.wait(50)
    assert page.minimumSizeHint().height() < label.heightForWidth(300)


def test_a_held_label_keeps_its_room_until_its_next_text(qtbot):
    """A job restarting clears its label and its result fills it: held, the label keeps its
    lines' height meanwhile (a box layout asks heightForWidth), so what is under it stays put."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    page = QWidget()
    qtbot.addWidget(page)
    lay = QVBoxLayout(page)
    label, below = WrappedLabel(TEXT), QLabel("a plot")
    lay.addWidget(label)
    lay.addWidget(below, 1)
    page.resize(300, 400)
    page.show()
    qtbot.waitExposed(page)
    QApplication.sendPostedEvents(None, QEvent.LayoutRequest)
    tall, where = label.height(), below.geometry()
    assert tall >= 4 * label.fontMetrics().lineSpacing() and where.top() >= tall
    label.hold("Reading…")
    QApplication.sendPostedEvents(None, QEvent.LayoutRequest)
    assert label.text() == "Reading…" and label.height() == tall and below.geometry() == where
    label.setText("short")  # the words came: the label takes their height again
    qtbot.waitUntil(lambda: label.height() < 2 * label.fontMetrics().lineSpacing() + 4)
    assert below.geometry().top() < where.top()


def test_a_label_in_a_hidden_page_holds_the_height_it_was_laid_out_in(qtbot):
    """A tab not on screen during a model switch: its labels are cleared while hidden, and the
    next show must not lay the page out with them empty before their new words come."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    label = WrappedLabel(TEXT)
    page = _page(qtbot, label)
    QApplication.sendPostedEvents(None, QEvent.LayoutRequest)
    tall = label.height()
    assert tall >= 4 * label.fontMetrics().lineSpacing()
    page.hide()
    label.hold()
    page.show()
    qtbot.waitExposed(page)
    QApplication.sendPostedEvents(None, QEvent.LayoutRequest)
    assert label.held and label.height() == tall
    # a label never laid out has only Qt's default size: it holds nothing
    fresh = WrappedLabel(TEXT)
    qtbot.addWidget(fresh)
    fresh.hold()
    assert not fresh.held
    # nor does a label the view hid itself
    label.setText(TEXT)
    label.hide()
    label.hold()
    assert not label.held


def _changes():
    """(what a user or the app does to a shown label, how), each of which moves its lines."""
    from PySide6.QtCore import Qt

    def scaled(font, factor):
        if font.pointSizeF() > 0:
            font.setPointSizeF(font.pointSizeF() * factor)
        else:
            font.setPixelSize(round(font.pixelSize() * factor))
        return font

    def bigger_font(label, page):
        label.setFont(scaled(label.font(), 1.6))

    return [
        ("setText", lambda label, page: label.setText(TEXT + " and more words at the end" * 4)),
        ("setFont", bigger_font),
        ("the page's style sheet", lambda label, page: page.setStyleSheet("QLabel { font-size: 21px; }")),
        ("setContentsMargins", lambda label, page: label.setContentsMargins(30, 20, 30, 20)),
        ("setMargin", lambda label, page: label.setMargin(17)),
        ("setIndent", lambda label, page: label.setIndent(60)),
        ("setTextFormat", lambda label, page: (label.setText("<b>" + TEXT[:150] + "</b>" * 8),
                                               label.heightForWidth(150), label.setTextFormat(Qt.PlainText))),
        ("setNum", lambda label, page: label.setNum(1234567.891)),
        ("clear", lambda label, page: label.clear()),
        ("setWordWrap(False)", lambda label, page: (label.setText(TEXT), label.heightForWidth(150),
                                                    label.setWordWrap(False))),
    ]


def test_a_wrap_labels_remembered_heights_are_qlabels_own_after_every_change(qtbot):
    """WrapLabel answers a width it was asked before from memory: after each change that moves
    its lines, every answer is still the one QLabel itself computes (asked past the memory)."""
    from explorer.ui.common.wrapped_label import WrapLabel

    widths = [60, 150, 300, 301, 600]
    for name, change in _changes():
        for cls in (WrapLabel, WrappedLabel):
            label = cls(TEXT)
            page = _page(qtbot, label)
            before = [label.heightForWidth(w) for w in widths]  # remembered
            assert before == [QLabel.heightForWidth(label, w) for w in widths]
            change(label, page)
            own = [QLabel.heightForWidth(label, w) for w in widths]
            assert own != before or name == "clear" and not label.text(), f"{name} did not move the lines"
            if cls is WrappedLabel:  # never below its held height (0 when not held): no -1 for no text
                own = [max(h, 0) for h in own]
            assert [label.heightForWidth(w) for w in widths] == own, f"{cls.__name__} after {name}"
            page.close()
