variable (h : False)
include h
theorem t2 : 1 = 2 := by sorry
