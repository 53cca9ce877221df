//go:build !noasm && !gccgo && !safe

#include "textflag.h"

// The AVX2 kernels of kernels.go: every sum in the order of its Go version,
// each product rounded before it is added (VMULPD then VADDPD, never a fused
// multiply-add), so that the results are the Go versions' bit for bit.

// LANE2 multiplies the next four coordinates of the two rows of a (Y10,
// Y11) by those of the row of b at offset off from DI and adds the products
// to the lane sums acc0 (row 0) and acc1 (row 1).
#define LANE2(off, acc0, acc1) \
	VMOVUPD off(DI), Y12    \
	VMULPD  Y10, Y12, Y13   \
	VADDPD  Y13, acc0, acc0 \
	VMULPD  Y11, Y12, Y12   \
	VADDPD  Y12, acc1, acc1

// func lanes2x5(k4 int, a *float64, lda int, b *float64, ldb int, out *[10][4]float64)
TEXT ·lanes2x5(SB), NOSPLIT, $0-48
	MOVQ k4+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R9
	MOVQ out+40(FP), DX
	SHLQ $3, R8
	SHLQ $3, R9
	LEAQ (SI)(R8*1), R8   // the second row of a
	LEAQ (R9)(R9*2), R10  // three rows of b
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	SHRQ $2, CX
	JZ   store2x5

loop2x5:
	VMOVUPD (SI), Y10
	VMOVUPD (R8), Y11
	LANE2(0, Y0, Y5)
	VMOVUPD (DI)(R9*1), Y12
	VMULPD  Y10, Y12, Y13
	VADDPD  Y13, Y1, Y1
	VMULPD  Y11, Y12, Y12
	VADDPD  Y12, Y6, Y6
	VMOVUPD (DI)(R9*2), Y12
	VMULPD  Y10, Y12, Y13
	VADDPD  Y13, Y2, Y2
	VMULPD  Y11, Y12, Y12
	VADDPD  Y12, Y7, Y7
	VMOVUPD (DI)(R10*1), Y12
	VMULPD  Y10, Y12, Y13
	VADDPD  Y13, Y3, Y3
	VMULPD  Y11, Y12, Y12
	VADDPD  Y12, Y8, Y8
	VMOVUPD (DI)(R9*4), Y12
	VMULPD  Y10, Y12, Y13
	VADDPD  Y13, Y4, Y4
	VMULPD  Y11, Y12, Y12
	VADDPD  Y12, Y9, Y9
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop2x5

store2x5:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VMOVUPD Y8, 256(DX)
	VMOVUPD Y9, 288(DX)
	VZEROUPPER
	RET

// func lanes1x5(k4 int, a *float64, b *float64, ldb int, out *[10][4]float64)
TEXT ·lanes1x5(SB), NOSPLIT, $0-40
	MOVQ k4+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ out+32(FP), DX
	SHLQ $3, R9
	LEAQ (R9)(R9*2), R10
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	SHRQ $2, CX
	JZ   store1x5

loop1x5:
	VMOVUPD (SI), Y10
	VMULPD  (DI), Y10, Y11
	VADDPD  Y11, Y0, Y0
	VMULPD  (DI)(R9*1), Y10, Y12
	VADDPD  Y12, Y1, Y1
	VMULPD  (DI)(R9*2), Y10, Y13
	VADDPD  Y13, Y2, Y2
	VMULPD  (DI)(R10*1), Y10, Y14
	VADDPD  Y14, Y3, Y3
	VMULPD  (DI)(R9*4), Y10, Y15
	VADDPD  Y15, Y4, Y4
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop1x5

store1x5:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VZEROUPPER
	RET

// ACC adds coef·b[off_t + o/8 ...] (Y12 holds coef broadcast, R12 the row)
// to the four values in acc.
#define ACC(o, acc) \
	VMULPD o(R12), Y12, Y13 \
	VADDPD Y13, acc, acc

// TERM loads term t = R11's coefficient into Y12 and its row, at the
// current block (SI), into R12.
#define TERM \
	VBROADCASTSD (R9)(R11*8), Y12 \
	MOVQ         (R10)(R11*8), R12 \
	LEAQ         (SI)(R12*8), R12

// func axpyRowsAVX2(n int, c *float64, k int, coef *float64, off *int, b *float64)
TEXT ·axpyRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ c+8(FP), DI
	MOVQ k+16(FP), R8
	MOVQ coef+24(FP), R9
	MOVQ off+32(FP), R10
	MOVQ b+40(FP), SI

ax48:
	CMPQ CX, $48
	JLT  ax16
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	VMOVUPD 128(DI), Y4
	VMOVUPD 160(DI), Y5
	VMOVUPD 192(DI), Y6
	VMOVUPD 224(DI), Y7
	VMOVUPD 256(DI), Y8
	VMOVUPD 288(DI), Y9
	VMOVUPD 320(DI), Y10
	VMOVUPD 352(DI), Y11
	XORQ R11, R11

ax48t:
	TERM
	ACC(0, Y0)
	ACC(32, Y1)
	ACC(64, Y2)
	ACC(96, Y3)
	ACC(128, Y4)
	ACC(160, Y5)
	ACC(192, Y6)
	ACC(224, Y7)
	ACC(256, Y8)
	ACC(288, Y9)
	ACC(320, Y10)
	ACC(352, Y11)
	INCQ R11
	CMPQ R11, R8
	JLT  ax48t
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD Y6, 192(DI)
	VMOVUPD Y7, 224(DI)
	VMOVUPD Y8, 256(DI)
	VMOVUPD Y9, 288(DI)
	VMOVUPD Y10, 320(DI)
	VMOVUPD Y11, 352(DI)
	ADDQ $384, DI
	ADDQ $384, SI
	SUBQ $48, CX
	JMP  ax48

ax16:
	CMPQ CX, $16
	JLT  ax4
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ R11, R11

ax16t:
	TERM
	ACC(0, Y0)
	ACC(32, Y1)
	ACC(64, Y2)
	ACC(96, Y3)
	INCQ R11
	CMPQ R11, R8
	JLT  ax16t
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $16, CX
	JMP  ax16

ax4:
	CMPQ    CX, $4
	JLT     ax1
	VMOVUPD (DI), Y0
	XORQ    R11, R11

ax4t:
	TERM
	ACC(0, Y0)
	INCQ R11
	CMPQ R11, R8
	JLT  ax4t
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  ax4

ax1:
	TESTQ  CX, CX
	JZ     axdone
	VMOVSD (DI), X0
	XORQ   R11, R11

ax1t:
	VMOVSD (R9)(R11*8), X12
	MOVQ   (R10)(R11*8), R12
	VMULSD (SI)(R12*8), X12, X13
	VADDSD X13, X0, X0
	INCQ   R11
	CMPQ   R11, R8
	JLT    ax1t
	VMOVSD X0, (DI)
	ADDQ   $8, DI
	ADDQ   $8, SI
	DECQ   CX
	JMP    ax1

axdone:
	VZEROUPPER
	RET

// STEPN takes the SGD step on the four values at offset o of w (DI) whose
// data term is in g, without an Origin: g += r·w (Y14 = r), w −= μ·g
// (Y15 = μ).
#define STEPN(o, g) \
	VMULPD  o(DX), Y14, Y12 \
	VADDPD  Y12, g, g       \
	VMULPD  g, Y15, g       \
	VMOVUPD o(DI), Y12      \
	VSUBPD  g, Y12, Y12     \
	VMOVUPD Y12, o(DI)

// STEPO is STEPN with an Origin: g += r·θ (DX), w −= μ·g, θ = θ₀ (BX) + w.
#define STEPO(o, g) \
	STEPN(o, g)             \
	VADDPD  o(BX), Y12, Y12 \
	VMOVUPD Y12, o(DX)

// func stepRowsAVX2(n int, w, th, th0 *float64, r, mu float64, k int, coef *float64, off *int, b *float64)
TEXT ·stepRowsAVX2(SB), NOSPLIT, $0-80
	MOVQ         n+0(FP), CX
	MOVQ         w+8(FP), DI
	MOVQ         th+16(FP), DX
	MOVQ         th0+24(FP), BX
	VBROADCASTSD r+32(FP), Y14
	VBROADCASTSD mu+40(FP), Y15
	MOVQ         k+48(FP), R8
	MOVQ         coef+56(FP), R9
	MOVQ         off+64(FP), R10
	MOVQ         b+72(FP), SI
	XORQ         R13, R13
	TESTQ        BX, BX
	SETNE        R13B         // R13 = 1 with an Origin

st48:
	CMPQ CX, $48
	JLT  st16
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	XORQ R11, R11
	CMPQ R11, R8
	JGE  st48e

st48t:
	TERM
	ACC(0, Y0)
	ACC(32, Y1)
	ACC(64, Y2)
	ACC(96, Y3)
	ACC(128, Y4)
	ACC(160, Y5)
	ACC(192, Y6)
	ACC(224, Y7)
	ACC(256, Y8)
	ACC(288, Y9)
	ACC(320, Y10)
	ACC(352, Y11)
	INCQ R11
	CMPQ R11, R8
	JLT  st48t

st48e:
	TESTQ R13, R13
	JZ    st48n
	STEPO(0, Y0)
	STEPO(32, Y1)
	STEPO(64, Y2)
	STEPO(96, Y3)
	STEPO(128, Y4)
	STEPO(160, Y5)
	STEPO(192, Y6)
	STEPO(224, Y7)
	STEPO(256, Y8)
	STEPO(288, Y9)
	STEPO(320, Y10)
	STEPO(352, Y11)
	JMP st48d

st48n:
	STEPN(0, Y0)
	STEPN(32, Y1)
	STEPN(64, Y2)
	STEPN(96, Y3)
	STEPN(128, Y4)
	STEPN(160, Y5)
	STEPN(192, Y6)
	STEPN(224, Y7)
	STEPN(256, Y8)
	STEPN(288, Y9)
	STEPN(320, Y10)
	STEPN(352, Y11)

st48d:
	ADDQ $384, DI
	ADDQ $384, DX
	ADDQ $384, BX
	ADDQ $384, SI
	SUBQ $48, CX
	JMP  st48

st16:
	CMPQ CX, $16
	JLT  st4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ R11, R11
	CMPQ R11, R8
	JGE  st16e

st16t:
	TERM
	ACC(0, Y0)
	ACC(32, Y1)
	ACC(64, Y2)
	ACC(96, Y3)
	INCQ R11
	CMPQ R11, R8
	JLT  st16t

st16e:
	TESTQ R13, R13
	JZ    st16n
	STEPO(0, Y0)
	STEPO(32, Y1)
	STEPO(64, Y2)
	STEPO(96, Y3)
	JMP st16d

st16n:
	STEPN(0, Y0)
	STEPN(32, Y1)
	STEPN(64, Y2)
	STEPN(96, Y3)

st16d:
	ADDQ $128, DI
	ADDQ $128, DX
	ADDQ $128, BX
	ADDQ $128, SI
	SUBQ $16, CX
	JMP  st16

st4:
	CMPQ   CX, $4
	JLT    st1
	VXORPD Y0, Y0, Y0
	XORQ   R11, R11
	CMPQ   R11, R8
	JGE    st4e

st4t:
	TERM
	ACC(0, Y0)
	INCQ R11
	CMPQ R11, R8
	JLT  st4t

st4e:
	TESTQ R13, R13
	JZ    st4n
	STEPO(0, Y0)
	JMP   st4d

st4n:
	STEPN(0, Y0)

st4d:
	ADDQ $32, DI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  st4

st1:
	TESTQ  CX, CX
	JZ     stdone
	VXORPD X0, X0, X0
	XORQ   R11, R11
	CMPQ   R11, R8
	JGE    st1e

st1t:
	VMOVSD (R9)(R11*8), X12
	MOVQ   (R10)(R11*8), R12
	VMULSD (SI)(R12*8), X12, X13
	VADDSD X13, X0, X0
	INCQ   R11
	CMPQ   R11, R8
	JLT    st1t

st1e:
	VMULSD (DX), X14, X12
	VADDSD X12, X0, X0
	VMULSD X0, X15, X0
	VMOVSD (DI), X12
	VSUBSD X0, X12, X12
	VMOVSD X12, (DI)
	TESTQ  R13, R13
	JZ     st1d
	VADDSD (BX), X12, X12
	VMOVSD X12, (DX)

st1d:
	ADDQ $8, DI
	ADDQ $8, DX
	ADDQ $8, BX
	ADDQ $8, SI
	DECQ CX
	JMP  st1

stdone:
	VZEROUPPER
	RET

// func addScaledAVX2(n int, dst *float64, alpha float64, s *float64)
TEXT ·addScaledAVX2(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	MOVQ         dst+8(FP), DI
	VBROADCASTSD alpha+16(FP), Y15
	MOVQ         s+24(FP), SI

as16:
	CMPQ    CX, $16
	JLT     as4
	VMULPD  (SI), Y15, Y0
	VMULPD  32(SI), Y15, Y1
	VMULPD  64(SI), Y15, Y2
	VMULPD  96(SI), Y15, Y3
	VADDPD  (DI), Y0, Y0
	VADDPD  32(DI), Y1, Y1
	VADDPD  64(DI), Y2, Y2
	VADDPD  96(DI), Y3, Y3
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $16, CX
	JMP     as16

as4:
	CMPQ    CX, $4
	JLT     as1
	VMULPD  (SI), Y15, Y0
	VADDPD  (DI), Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $4, CX
	JMP     as4

as1:
	TESTQ  CX, CX
	JZ     asdone
	VMULSD (SI), X15, X0
	VADDSD (DI), X0, X0
	VMOVSD X0, (DI)
	ADDQ   $8, SI
	ADDQ   $8, DI
	DECQ   CX
	JMP    as1

asdone:
	VZEROUPPER
	RET

// func sqLanes4(m4, k int, x *[4]*float64, d *[4]*float64, out *[4][4]float64)
// For each of four examples e, out[e] = the four lane sums of (d_e[c]·x_e[j])²
// over classes c < k and features j < 4·m4, lane j mod 4, in order of c then j.
TEXT ·sqLanes4(SB), NOSPLIT, $0-40
	MOVQ   m4+0(FP), BX
	MOVQ   k+8(FP), R14
	MOVQ   x+16(FP), AX
	MOVQ   0(AX), SI
	MOVQ   8(AX), DI
	MOVQ   16(AX), R8
	MOVQ   24(AX), R9
	MOVQ   d+24(FP), AX
	MOVQ   0(AX), R10
	MOVQ   8(AX), R11
	MOVQ   16(AX), R12
	MOVQ   24(AX), R13
	MOVQ   out+32(FP), AX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	SHLQ   $5, BX         // bytes of features
	JZ     sqstore
	XORQ   DX, DX         // class c

sqclass:
	CMPQ         DX, R14
	JGE          sqstore
	VBROADCASTSD (R10)(DX*8), Y4
	VBROADCASTSD (R11)(DX*8), Y5
	VBROADCASTSD (R12)(DX*8), Y6
	VBROADCASTSD (R13)(DX*8), Y7
	XORQ         CX, CX   // byte offset of feature j

sqfeat:
	VMULPD  (SI)(CX*1), Y4, Y8
	VMULPD  (DI)(CX*1), Y5, Y9
	VMULPD  (R8)(CX*1), Y6, Y10
	VMULPD  (R9)(CX*1), Y7, Y11
	VMULPD  Y8, Y8, Y8
	VMULPD  Y9, Y9, Y9
	VMULPD  Y10, Y10, Y10
	VMULPD  Y11, Y11, Y11
	VADDPD  Y8, Y0, Y0
	VADDPD  Y9, Y1, Y1
	VADDPD  Y10, Y2, Y2
	VADDPD  Y11, Y3, Y3
	ADDQ    $32, CX
	CMPQ    CX, BX
	JLT     sqfeat
	INCQ    DX
	JMP     sqclass

sqstore:
	VMOVUPD Y0, 0(AX)
	VMOVUPD Y1, 32(AX)
	VMOVUPD Y2, 64(AX)
	VMOVUPD Y3, 96(AX)
	VZEROUPPER
	RET

// SACC adds s·(a·b[o]) (Y12 = a, Y13 = s broadcast, R12 the row) to acc.
#define SACC(o, acc) \
	VMULPD o(R12), Y12, Y14 \
	VMULPD Y14, Y13, Y14    \
	VADDPD Y14, acc, acc

// STERM loads term t = R11's coefficients into Y12 (a) and Y13 (s) and its
// row, at the current block (SI), into R12.
#define STERM \
	VBROADCASTSD (R9)(R11*8), Y12  \
	VBROADCASTSD (BX)(R11*8), Y13  \
	MOVQ         (R10)(R11*8), R12 \
	LEAQ         (SI)(R12*8), R12

// func axpyScaledAVX2(n int, c *float64, k int, a, s *float64, off *int, b *float64)
TEXT ·axpyScaledAVX2(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ c+8(FP), DI
	MOVQ k+16(FP), R8
	MOVQ a+24(FP), R9
	MOVQ s+32(FP), BX
	MOVQ off+40(FP), R10
	MOVQ b+48(FP), SI

sa48:
	CMPQ CX, $48
	JLT  sa16
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	VMOVUPD 128(DI), Y4
	VMOVUPD 160(DI), Y5
	VMOVUPD 192(DI), Y6
	VMOVUPD 224(DI), Y7
	VMOVUPD 256(DI), Y8
	VMOVUPD 288(DI), Y9
	VMOVUPD 320(DI), Y10
	VMOVUPD 352(DI), Y11
	XORQ R11, R11

sa48t:
	STERM
	SACC(0, Y0)
	SACC(32, Y1)
	SACC(64, Y2)
	SACC(96, Y3)
	SACC(128, Y4)
	SACC(160, Y5)
	SACC(192, Y6)
	SACC(224, Y7)
	SACC(256, Y8)
	SACC(288, Y9)
	SACC(320, Y10)
	SACC(352, Y11)
	INCQ R11
	CMPQ R11, R8
	JLT  sa48t
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD Y6, 192(DI)
	VMOVUPD Y7, 224(DI)
	VMOVUPD Y8, 256(DI)
	VMOVUPD Y9, 288(DI)
	VMOVUPD Y10, 320(DI)
	VMOVUPD Y11, 352(DI)
	ADDQ $384, DI
	ADDQ $384, SI
	SUBQ $48, CX
	JMP  sa48

sa16:
	CMPQ CX, $16
	JLT  sa4
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ R11, R11

sa16t:
	STERM
	SACC(0, Y0)
	SACC(32, Y1)
	SACC(64, Y2)
	SACC(96, Y3)
	INCQ R11
	CMPQ R11, R8
	JLT  sa16t
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $16, CX
	JMP  sa16

sa4:
	CMPQ    CX, $4
	JLT     sa1
	VMOVUPD (DI), Y0
	XORQ    R11, R11

sa4t:
	STERM
	SACC(0, Y0)
	INCQ R11
	CMPQ R11, R8
	JLT  sa4t
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  sa4

sa1:
	TESTQ  CX, CX
	JZ     sadone
	VMOVSD (DI), X0
	XORQ   R11, R11

sa1t:
	VMOVSD (R9)(R11*8), X12
	VMOVSD (BX)(R11*8), X13
	MOVQ   (R10)(R11*8), R12
	VMULSD (SI)(R12*8), X12, X14
	VMULSD X14, X13, X14
	VADDSD X14, X0, X0
	INCQ   R11
	CMPQ   R11, R8
	JLT    sa1t
	VMOVSD X0, (DI)
	ADDQ   $8, DI
	ADDQ   $8, SI
	DECQ   CX
	JMP    sa1

sadone:
	VZEROUPPER
	RET
