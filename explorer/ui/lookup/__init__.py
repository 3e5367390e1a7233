"""The lookup view: row i of E two ways, one-hot vector × E versus a pointer
offset, animated side by side, then checked and measured on the loaded table;
then the backward step on the user's text (dL/dE = one_hot(x)ᵀ G).

One widget per part: :class:`~.controls.PlaybackControls` and
:class:`~.controls.StoredAsChoice`, :class:`~.onehot_panel.OneHotPanel`,
:class:`~.pointer_panel.PointerPanel`, :class:`~.measure_panel.MeasurePanel`,
:class:`~.backward_panel.BackwardPanel`,
composed by :class:`~.view.LookupView`.
"""

from explorer.ui.lookup.view import LookupView

__all__ = ["LookupView"]
