export Nat (succ)
theorem t2 (n : ℕ) : succ n > 0 := by sorry
