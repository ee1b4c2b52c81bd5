/*
 * onednn_fpmath.c - a direct oneDNN 2.6 program, without parity: a 16x64 by 64x16 f32 matmul whose source elements
 * are 1 + 2^-10 (no bfloat16 value: rounded to bf16 they are 1), run with fpmath mode strict and bf16. Exact f32
 * gives 64.0625 per element, bf16 operands 64. Prints the implementation and the result of each mode: on oneDNN
 * 2.6.3 with an avx512_core_bf16 CPU both run brg:avx512_core and give 64.0625 (docs/findings.md).
 *
 *     cc tools/onednn_fpmath.c -o /tmp/fpmath -ldnnl && /tmp/fpmath
 */
#include <dnnl.h>
#include <stdio.h>
int main(void){
  dnnl_engine_t e; dnnl_engine_create(&e, dnnl_cpu, 0);
  dnnl_stream_t s; dnnl_stream_create(&s, e, dnnl_stream_default_flags);
  enum {M=16,K=64,N=16};
  static float a[M*K], b[K*N], c[M*N];
  for(int i=0;i<M*K;i++) a[i]=1.0f+1.0f/1024;  /* not a bf16 value */
  for(int i=0;i<K*N;i++) b[i]=1.0f;
  dnnl_memory_desc_t am,bm,cm; dnnl_dims_t ad={M,K},bd={K,N},cd={M,N};
  dnnl_memory_desc_init_by_tag(&am,2,ad,dnnl_f32,dnnl_ab);
  dnnl_memory_desc_init_by_tag(&bm,2,bd,dnnl_f32,dnnl_ab);
  dnnl_memory_desc_init_by_tag(&cm,2,cd,dnnl_f32,dnnl_ab);
  for (int mode=0; mode<2; mode++){
    dnnl_matmul_desc_t md; dnnl_matmul_desc_init(&md,&am,&bm,NULL,&cm);
    dnnl_primitive_attr_t at; dnnl_primitive_attr_create(&at);
    dnnl_primitive_attr_set_fpmath_mode(at, mode? dnnl_fpmath_mode_bf16: dnnl_fpmath_mode_strict);
    dnnl_primitive_desc_t pd; int st=dnnl_primitive_desc_create(&pd,&md,at,e,NULL);
    const char*impl=""; dnnl_primitive_desc_query(pd,dnnl_query_impl_info_str,0,&impl);
    dnnl_primitive_t p; dnnl_primitive_create(&p,pd);
    dnnl_memory_t A,B,C; dnnl_memory_create(&A,&am,e,a); dnnl_memory_create(&B,&bm,e,b); dnnl_memory_create(&C,&cm,e,c);
    dnnl_exec_arg_t args[3]={{DNNL_ARG_SRC,A},{DNNL_ARG_WEIGHTS,B},{DNNL_ARG_DST,C}};
    dnnl_primitive_execute(p,s,3,args); dnnl_stream_wait(s);
    printf("fpmath %s: pd %d impl %s c[0]=%.9g (exact %.9g, bf16 operands %.9g)\n", mode?"bf16":"strict", st, impl, c[0], 64*(1.0+1.0/1024), 64.0);
  }
  return 0;
}
