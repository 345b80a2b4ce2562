"""A reduced module's model that records what its analysis asked about the rest of the
file: who uses a module-level name, who calls a function, which module-level names were
looked up (see ``incremental``)."""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.semantic import SemanticModel


class Tracker:
    def __init__(self, looked_up: set[str] | None = None) -> None:
        self.asked: set[str] = set()  # module-level names whose readers were asked for
        self.all_uses = False  # every binding's use count was asked for
        # Module-level names whose binding was looked up.
        self.looked_up: set[str] = looked_up if looked_up is not None else set()
        self.all_names = False  # every module-level name was listed


class RecordingBindings(dict):
    """The module scope's bindings, recording which names were asked about."""

    def __init__(self, bindings: dict, tracker: Tracker):
        super().__init__(bindings)
        self._tracker = tracker

    def __contains__(self, name) -> bool:
        self._tracker.looked_up.add(name)
        return super().__contains__(name)

    def __getitem__(self, name):
        self._tracker.looked_up.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self._tracker.looked_up.add(name)
        return super().get(name, default)

    def _listed(self):
        self._tracker.all_names = True

    def __iter__(self):
        self._listed()
        return super().__iter__()

    def keys(self):
        self._listed()
        return super().keys()

    def items(self):
        self._listed()
        return super().items()

    def values(self):
        self._listed()
        return super().values()

    def __len__(self) -> int:
        self._listed()
        return super().__len__()


class TrackedModel(SemanticModel):
    """A reduced module's model, recording the questions whose answers lie in chunks
    that read the analysed one: who uses a module-level name, who calls a function."""

    def __init__(self, source, tree, package, project, tracker: Tracker, stop=None):
        super().__init__(source, tree, package, project, stop)
        self.module_scope.bindings = RecordingBindings(self.module_scope.bindings, tracker)
        self.track(tracker)

    def track(self, tracker: Tracker) -> None:
        """Record into ``tracker`` from now on (one per chunk analysed in this model)."""
        self._tracker = tracker
        self.module_scope.bindings._tracker = tracker

    def binding_of(self, name):
        found = super().binding_of(name)
        # A kept answer records what looking it up would: the module-level name read
        # (found there, or nowhere), for the chunk asking now (``Tracker.looked_up``).
        if (found is None or found.scope is self.module_scope) and id(name) in self._scope_of_node:
            self._tracker.looked_up.add(name.id)
        return found

    def uses_of(self, binding):
        if binding.scope is self.module_scope:
            self._tracker.asked.add(binding.name)
        return super().uses_of(binding)

    @property
    def use_counts(self):
        self._tracker.all_uses = True
        return SemanticModel.use_counts.func(self)

    def calls_to(self, function):
        scope = self.function_scope(function)
        if scope is not None and scope.parent is self.module_scope:
            self._tracker.asked.add(function.name)  # its callers are in other chunks
        return super().calls_to(function)

    def _param_module(self, binding):
        function = binding.scope.node
        if binding.scope.parent is self.module_scope and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._tracker.asked.add(function.name)  # its callers pass the argument
        return super()._param_module(binding)

    def _modules_of_namesakes(self, binding):
        self._tracker.all_uses = True  # the answer reads every function of the file
        return super()._modules_of_namesakes(binding)
