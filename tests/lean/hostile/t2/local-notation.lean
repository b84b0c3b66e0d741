local notation "√" x => x
theorem t2 (x : ℝ) (h : 0 ≤ x) : √x * √x = x := by sorry
