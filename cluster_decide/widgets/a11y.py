"""Accessible names for the sliders: a screen reader says "Training demand (× today), 1.00".

ipywidgets draws a slider's handle with ``role="slider"`` but no name, because its label is a
separate element. This invisible widget (anywidget: its script ships inline, so it works with no
network) copies each slider's label to its handle's ``aria-label`` and the label's tooltip
(what ×1.00 means) to ``aria-description``, again whenever widgets are redrawn.
"""

from __future__ import annotations

import anywidget

__all__ = ["SliderNames"]


class SliderNames(anywidget.AnyWidget):
    """Put one anywhere on the page; it names every ipywidgets slider on it."""

    _esm = """
function nameSliders() {
  for (const slider of document.querySelectorAll('.widget-slider')) {
    const label = slider.querySelector('.widget-label');
    const handle = slider.querySelector('.noUi-handle');
    const text = label ? label.textContent.trim() : '';
    if (handle && text && handle.getAttribute('aria-label') !== text) {
      handle.setAttribute('aria-label', text);
      if (label.title) handle.setAttribute('aria-description', label.title);
    }
  }
}
export default {
  render({ el }) {
    el.style.display = 'none';
    nameSliders();
    const observer = new MutationObserver(nameSliders);
    observer.observe(document.body, { childList: true, subtree: true });
    return () => observer.disconnect();
  },
};
"""
