(set-logic HORN)
(set-option :fp.spacer.global true)
(set-option :fp.spacer.iuc 0)
; state: x0 = n, x1 = i, x2 = c
(declare-fun P3 (Int Int Int) Bool)
; entry; edge 0 -> 1; edge 1 -> 2; edge 2 -> 3
(assert (forall ((x0 Int) (x1 Int) (x2 Int)) (=> true (P3 x0 0 (let ((x1 0)) 0)))))
; edge 3 -> 4; edge 4 -> 6; edge 6 -> 7; edge 7 -> 3
(assert (forall ((x0 Int) (x1 Int) (x2 Int)) (=> (and (P3 x0 x1 x2) (< x2 x0)) (P3 x0 (+ x1 4) (let ((x1 (+ x1 4))) (+ x2 1))))))
; edge 3 -> 5; edge 5 -> 8; edge 8 -> 11; query: the target's error vertex 11
(assert (forall ((x0 Int) (x1 Int) (x2 Int)) (=> (and (P3 x0 x1 x2) (>= x2 x0) (= x1 15) (= 0 0)) false)))
(check-sat)
(get-model)
