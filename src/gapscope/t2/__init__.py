"""T2 (testing accuracy): does a generated Lean declaration mean the right thing?

The generated declaration replaces the original under the same name; the declarations after
it that use it are its tests. Records, defect audit, prompts, programs, attribution and
metrics are plain Python; ``task.py`` wires them to Inspect. See docs/t2.md.
"""
