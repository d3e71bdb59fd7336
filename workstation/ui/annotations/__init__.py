"""Annotating on the chart: the keyboard and mouse tool (``tools``), undoable changes
(``commands``), how annotations are drawn (``drawing``), what the trainer learns from them
(``labels``, drawn in the chart's lanes), the list dock's model (``list_model``) and
``dock.AnnotationLayer``, which joins them to the store, the chart and the window."""
