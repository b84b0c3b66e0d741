universe u

inductive MyNat where
  | zero : MyNat
  | succ : MyNat → MyNat

namespace MyNat

def fromNat : Nat → MyNat
  | 0 => zero
  | n + 1 => succ (fromNat n)

instance {n : Nat} : OfNat MyNat n := ⟨fromNat n⟩

def induct {motive : MyNat → Sort u} (zero : motive 0)
    (succ : (n : MyNat) → motive n → motive (succ n)) : (t : MyNat) → motive t
  | .zero => zero
  | .succ n => succ n (induct zero succ n)

attribute [induction_eliminator] induct

def casesAlt {motive : MyNat → Sort u} (zero : motive 0)
    (succ : (n : MyNat) → motive (succ n)) : (t : MyNat) → motive t
  | .zero => zero
  | .succ n => succ n

attribute [cases_eliminator] casesAlt

def add (a : MyNat) : MyNat → MyNat
  | .zero => a
  | .succ b => succ (add a b)

instance : Add MyNat := ⟨add⟩

def mul (a : MyNat) : MyNat → MyNat
  | .zero => zero
  | .succ b => mul a b + a

instance : Mul MyNat := ⟨mul⟩

def pow (m : MyNat) : MyNat → MyNat
  | .zero => succ zero
  | .succ n => pow m n * m

instance : Pow MyNat MyNat := ⟨pow⟩

@[reducible] def le (a b : MyNat) : Prop := ∃ c : MyNat, b = a + c

instance : LE MyNat := ⟨le⟩

def isZero : MyNat → Prop
  | .zero => True
  | .succ _ => False

theorem one_eq_succ_zero : (1 : MyNat) = succ 0 := by rfl
theorem two_eq_succ_one : (2 : MyNat) = succ 1 := by rfl
theorem three_eq_succ_two : (3 : MyNat) = succ 2 := by rfl
theorem four_eq_succ_three : (4 : MyNat) = succ 3 := by rfl
theorem add_zero (a : MyNat) : a + 0 = a := by rfl
theorem add_succ (a d : MyNat) : a + succ d = succ (a + d) := by rfl
theorem mul_zero (a : MyNat) : a * 0 = 0 := by rfl
theorem mul_succ (a b : MyNat) : a * succ b = a * b + a := by rfl
theorem pow_zero (m : MyNat) : m ^ 0 = 1 := by rfl
theorem pow_succ (m n : MyNat) : m ^ succ n = m ^ n * m := by rfl
theorem succ_inj (a b : MyNat) (h : succ a = succ b) : a = b := by injection h
theorem zero_ne_succ (a : MyNat) : 0 ≠ succ a := by
  intro h
  have hz : isZero 0 := trivial
  rw [h] at hz
  exact hz

attribute [irreducible] add mul pow
