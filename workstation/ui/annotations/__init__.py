"""Annotating on the chart: the keyboard and mouse tool (``tools``), undoable changes
(``commands``), how annotations are drawn (``drawing``), the list dock's model
(``list_model``) and ``dock.AnnotationLayer``, which joins them to the store, the chart and
the window."""
