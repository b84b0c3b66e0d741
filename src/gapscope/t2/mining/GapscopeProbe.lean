/-
The tracer's known answer (gapscope's Lean self-test, docs/lean.md "The self-test"):
`GapscopeMine.lean` is run on a Lake project made of this one module, and what it writes is
compared with the graph `gapscope.t2.mining.probe` expects (`EXPECTED` there: each
declaration's kind, first line and the project declarations it uses). Every value is a term,
so that the constants each declaration mentions are the ones written here, and no declaration
has a doc comment, so each range starts on its keyword's line. It imports nothing (the prelude
only), so it also compiles on its own, as the self-test compiles every shipped program.
Changing this file means changing `EXPECTED`.
-/

namespace GapscopeProbe

def double (n : Nat) : Nat := n + n

theorem double_zero : double 0 = 0 := rfl

def quadruple (n : Nat) : Nat := double (double n)

theorem quadruple_zero : quadruple 0 = 0 := rfl

theorem quadruple_zero_double : quadruple 0 = double 0 :=
  Eq.trans quadruple_zero double_zero.symm

theorem unrelated : (1 : Nat) + 1 = 2 := rfl

end GapscopeProbe
