#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes a TF1 text GraphDef of a recurrent while loop without TensorArrays:
# h = x; repeat T times: h = tanh(h W + b) (W N x N, b N, fixed random values), output y = h.
# The unroll-or-loop measurements of converter/passes/README.md: convert with --loops unroll / runtime / auto and
# time with floe-bench. Usage: rnn_loop_graph.py T [N=32] > graph.pbtxt
import sys, random
T=int(sys.argv[1]); N=int(sys.argv[2]) if len(sys.argv)>2 else 32
random.seed(1)
out=[]
def node(name,op,inputs=(),attrs=()):
    s='node {\n  name: "%s"\n  op: "%s"\n'%(name,op)
    for i in inputs: s+='  input: "%s"\n'%i
    for a in attrs: s+='  '+a+'\n'
    out.append(s+'}\n')
def ty(k,t): return 'attr { key: "%s" value { type: %s } }'%(k,t)
def const(name,dt,dims,vals):
    s='attr { key: "value" value { tensor { dtype: %s tensor_shape {'%dt
    s+=''.join(' dim { size: %d }'%d for d in dims)+' }'
    if dt=='DT_FLOAT': s+=' tensor_content: "%s"'%''.join('\\%03o'%b for v in vals for b in __import__('struct').pack('<f',v))
    else: s+=''.join(' int_val: %d'%v for v in vals)
    node(name,'Const',(),(ty('dtype',dt),s+' } } }'))
def enter(name,inp,inv,dt):
    node(name,'Enter',(inp,),(ty('T',dt),'attr { key: "frame_name" value { s: "rnn/while/while_context" } }','attr { key: "is_constant" value { b: %s } }'%('true' if inv else 'false'),'attr { key: "parallel_iterations" value { i: 10 } }'))
node('x','Placeholder',(),(ty('dtype','DT_FLOAT'),'attr { key: "shape" value { shape { dim { size: 1 } dim { size: %d } } } }'%N))
const('W','DT_FLOAT',[N,N],[random.uniform(-0.3,0.3) for _ in range(N*N)])
const('b','DT_FLOAT',[N],[random.uniform(-0.1,0.1) for _ in range(N)])
const('T','DT_INT32',[],[T]); const('zero','DT_INT32',[],[0]); const('one','DT_INT32',[],[1])
p='rnn/while'
enter(p+'/Enter','zero',False,'DT_INT32'); enter(p+'/Enter_1','x',False,'DT_FLOAT')
enter(p+'/T','T',True,'DT_INT32'); enter(p+'/one','one',True,'DT_INT32'); enter(p+'/W','W',True,'DT_FLOAT'); enter(p+'/b','b',True,'DT_FLOAT')
node(p+'/Merge','Merge',(p+'/Enter',p+'/NextIteration'),(ty('T','DT_INT32'),'attr { key: "N" value { i: 2 } }'))
node(p+'/Merge_1','Merge',(p+'/Enter_1',p+'/NextIteration_1'),(ty('T','DT_FLOAT'),'attr { key: "N" value { i: 2 } }'))
node(p+'/Less','Less',(p+'/Merge',p+'/T'),(ty('T','DT_INT32'),))
node(p+'/LoopCond','LoopCond',(p+'/Less',))
node(p+'/Switch','Switch',(p+'/Merge',p+'/LoopCond'),(ty('T','DT_INT32'),))
node(p+'/Switch_1','Switch',(p+'/Merge_1',p+'/LoopCond'),(ty('T','DT_FLOAT'),))
node(p+'/Identity','Identity',(p+'/Switch:1',),(ty('T','DT_INT32'),))
node(p+'/Identity_1','Identity',(p+'/Switch_1:1',),(ty('T','DT_FLOAT'),))
node(p+'/add','Add',(p+'/Identity',p+'/one'),(ty('T','DT_INT32'),))
node(p+'/MatMul','MatMul',(p+'/Identity_1',p+'/W'),(ty('T','DT_FLOAT'),'attr { key: "transpose_a" value { b: false } }','attr { key: "transpose_b" value { b: false } }'))
node(p+'/BiasAdd','BiasAdd',(p+'/MatMul',p+'/b'),(ty('T','DT_FLOAT'),))
node(p+'/Tanh','Tanh',(p+'/BiasAdd',),(ty('T','DT_FLOAT'),))
node(p+'/NextIteration','NextIteration',(p+'/add',),(ty('T','DT_INT32'),))
node(p+'/NextIteration_1','NextIteration',(p+'/Tanh',),(ty('T','DT_FLOAT'),))
node(p+'/Exit_1','Exit',(p+'/Switch_1',),(ty('T','DT_FLOAT'),))
node('y','Identity',(p+'/Exit_1',),(ty('T','DT_FLOAT'),))
sys.stdout.write(''.join(out)+'versions { producer: 27 }\n')
