set_option autoImplicit true in
theorem t2 : f x = f x := by sorry
