"""Built-in graders; each module registers one type named after the module.

Nothing is imported here: ``assay.core.builtins.BUILTIN`` names every built-in type, and the
registry imports a grader's module the first time its type is looked up (``core.registry.get``),
so a suite pays only for the graders it uses.
"""
