#!/usr/bin/env python3
"""Fit of the `mlx` engine's decode constants (stdlib/engines.deploy `decode_efficiency`,
`token_overhead`) to the MLX decode rows of tests/fixtures/calibration/unified_tps.csv,
and the leave-one-chip-out check reported in docs/calibration-speed.md ("MLX").

Needs a built binary (cargo build). Each row is run through `deployfit explain` as the
deployment a user writes; the step time at full bandwidth is recovered from the binary's
own prediction at the llama.cpp Metal constants it had when this fit was made (87.4 %,
5.95 ms per 32 layers), then refitted. Run it with the `mlx` entry's two fields removed to
reproduce the fit from scratch.
"""
import json, subprocess, sys
BIN='/work/main/target/debug/deployfit'
# (row, engine, model, quant, gpu, prompt, measured)
R=[
 (3,'mlx','Qwen/Qwen3-4B-Instruct-2507','bf16','m4_max_40c_64gb',2048,52.47),
 (5,'mlx','Qwen/Qwen3-4B-Instruct-2507','mlx_8bit','m4_max_40c_64gb',2048,86.907),
 (15,'mlx','Qwen/Qwen3-4B-Instruct-2507','mlx_4bit','m4_max_40c_64gb',2048,134.52),
 (17,'mlx','Qwen/Qwen3-30B-A3B-Instruct-2507','mlx_8bit','m4_max_40c_64gb',2048,83.16),
 (23,'mlx','Qwen/Qwen3-30B-A3B-Instruct-2507','mlx_4bit','m4_max_40c_64gb',2048,113.33),
 (25,'mlx','Qwen/Qwen3-4B-Instruct-2507','mlx_4bit','m3_pro_18c_18gb',2048,44.62),
 (27,'mlx','meta-llama/Meta-Llama-3-70B-Instruct','bf16','m2_ultra_192gb',16,4.7),
 (33,'mlx','meta-llama/Llama-3.3-70B-Instruct','mlx_4bit','m3_max_40c_64gb',260,9.351),
 (35,'mlx','meta-llama/Llama-3.3-70B-Instruct','mlx_4bit','m3_max_40c_64gb',2173,9.123),
 (37,'mlx','meta-llama/Llama-3.3-70B-Instruct','mlx_4bit','m3_max_40c_64gb',8015,8.52),
 (39,'mlx','meta-llama/Llama-3.3-70B-Instruct','mlx_4bit','m3_max_40c_64gb',16003,7.779),
 (41,'mlx','meta-llama/Llama-3.3-70B-Instruct','mlx_4bit','m3_max_40c_64gb',30136,6.784),
 (43,'mlx','meta-llama/Llama-3.1-8B-Instruct','mlx_4bit','m4_pro_64gb',32159,23.146),
 (47,'mlx','Qwen/Qwen2.5-7B-Instruct-1M','mlx_4bit','m2_max_38c_32gb',115,71.392),
 (51,'mlx','Qwen/Qwen3-0.6B','mlx_4bit','m4_pro_48gb',512,349.3),
 (53,'mlx','Qwen/Qwen3-0.6B','mlx_8bit','m4_pro_48gb',512,257.7),
 (55,'mlx','Qwen/Qwen3-0.6B','bf16','m4_pro_48gb',512,162.8),
 (63,'mlx','Qwen/Qwen3-0.6B','mlx_4bit','m3_ultra_60c_256gb',512,387.64),
 (69,'mlx','google/gemma-3-1b-it','mlx_4bit','m3_ultra_60c_256gb',512,261.07),
 (72,'mlx','meta-llama/Llama-3.1-8B-Instruct','mlx_4bit','m3_ultra_60c_256gb',512,119.39),
 (75,'mlx','Qwen/Qwen3-8B','mlx_4bit','m3_ultra_60c_256gb',512,112.89),
 (78,'mlx','Qwen/Qwen2.5-14B-Instruct','mlx_4bit','m3_ultra_60c_256gb',512,66.36),
 (81,'mlx','google/gemma-3-27b-it','mlx_4bit','m3_ultra_60c_256gb',512,35.19),
 (100,'llamacpp','Qwen/Qwen3-0.6B','Q4_K_M','m4_pro_48gb',1,282.8),
 (102,'llamacpp','Qwen/Qwen3-0.6B','fp16','m4_pro_48gb',1,149.7),
 (108,'llamacpp','meta-llama/Llama-3.1-8B-Instruct','Q4_K_M','m1_max',1,46.2),
 (110,'llamacpp','meta-llama/Llama-3.1-8B-Instruct','Q4_K_M','m4_10c_16gb',1,20.87),
 (113,'llamacpp','TinyLlama/TinyLlama-1.1B-Chat-v1.0','Q4_K_M','m1_ultra_128gb',1,242.56),
 (120,'llamacpp','openai/gpt-oss-20b','mxfp4','m3_ultra_80c_256gb',1,115.52),
 (124,'llamacpp','meta-llama/Llama-3.3-70B-Instruct','Q4_0','m3_max_40c_64gb',260,9.07),
 (126,'llamacpp','meta-llama/Llama-3.3-70B-Instruct','Q4_K_M','m3_max_40c_64gb',260,8.15),
 (128,'llamacpp','meta-llama/Llama-3.3-70B-Instruct','Q4_0','m3_max_40c_64gb',2173,8.90),
 (130,'llamacpp','meta-llama/Llama-3.3-70B-Instruct','Q4_K_M','m3_max_40c_64gb',2173,7.87),
]
def run():
    text=[]
    for (r,e,m,q,g,p,v) in R:
        ctx=max(p+128,512)
        text.append(f'deployment r{r} {{\n    model = "{m}"\n    quant = {q}\n    gpu = {g}\n    engine = {e}\n    context = {ctx}\n}}')
    open('m.deploy','w').write('\n'.join(text))
    res=subprocess.run([BIN,'explain','m.deploy','--format','json'],capture_output=True,text=True)
    d={x['deployment']:x for x in json.loads(res.stdout)}
    res2=subprocess.run([BIN,'check','m.deploy','--format','json'],capture_output=True,text=True)
    errs=[x['message'][:120] for x in json.loads(res2.stdout)['diagnostics'] if x['severity']=='error']
    return d, errs
if __name__=='__main__' and False:
    d,errs=run()
    print('\n'.join(errs))
    import statistics
    es=[]
    for (r,e,m,q,g,p,v) in R:
        x=d.get(f'r{r}')
        if not x or x.get('decode_tps') is None: print(r,'n/a'); continue
        pr=x['decode_tps']; lo=x['decode_tps_low']; hi=x['decode_tps_high']
        err=(pr-v)/v; es.append(abs(err))
        print(f"{r:4} {e:8} {m[:34]:34} {q:8} {g:18} meas {v:7.1f} pred {pr:7.1f} ({err*100:+.0f}%) {'IN' if lo<=v<=hi else 'out'} w={x['weights_bytes']/2**30:.2f}")
    print('median', statistics.median(es))

import json, statistics, itertools
BW={'m4_max_40c_64gb':546,'m3_pro_18c_18gb':150,'m2_ultra_192gb':800,'m3_max_40c_64gb':400,'m4_pro_64gb':273,'m2_max_38c_32gb':400,'m4_pro_48gb':273,'m3_ultra_60c_256gb':819,'m1_max':400,'m4_10c_16gb':120,'m1_ultra_128gb':800,'m3_ultra_80c_256gb':819}
L={'Qwen/Qwen3-4B-Instruct-2507':36,'Qwen/Qwen3-30B-A3B-Instruct-2507':48,'meta-llama/Meta-Llama-3-70B-Instruct':80,'meta-llama/Llama-3.3-70B-Instruct':80,'meta-llama/Llama-3.1-8B-Instruct':32,'Qwen/Qwen2.5-7B-Instruct-1M':28,'Qwen/Qwen3-0.6B':28,'google/gemma-3-1b-it':26,'Qwen/Qwen3-8B':36,'Qwen/Qwen2.5-14B-Instruct':48,'google/gemma-3-27b-it':62,'TinyLlama/TinyLlama-1.1B-Chat-v1.0':22,'openai/gpt-oss-20b':24}
d,_=run()
pts=[]
for (r,e,m,q,g,p,v) in R:
    x=d[f'r{r}']; pred=x['decode_tps']; bw=BW[g]*1e9; lay=L[m]
    t0=5.95e-3 if True else 0
    step_bytes=(1/pred - t0*lay/32)*0.874*bw
    pts.append((r,e,g,step_bytes/bw,lay/32,v))
def evaluate(rows,eta,t0):
    errs=[];ins=0
    for (r,e,g,sec_at_full,l32,v) in rows:
        pred=1/(sec_at_full/eta + t0*l32); err=(pred-v)/v; errs.append(abs(err)); ins+= (0.75*pred<=v<=1.15*pred)
    return statistics.median(errs), ins/len(rows)
def fit(rows):
    best=None
    for eta in [x/1000 for x in range(600,1301,5)]:
        for t0 in [x/10000 for x in range(0,80,1)]:
            errs=[abs(1/(s/eta+t0*l)-v)/v for (_,_,_,s,l,v) in rows]
            m=statistics.median(errs)+0.5*statistics.mean(errs)
            if best is None or m<best[0]: best=(m,eta,t0)
    return best
for eng in ['mlx','llamacpp']:
    rows=[p for p in pts if p[1]==eng]
    print(eng, 'all-fit', fit(rows))
    chips=sorted(set(p[2] for p in rows))
    # leave-one-chip-out
    errs=[];ins=0;n=0
    for c in chips:
        tr=[p for p in rows if p[2]!=c]; te=[p for p in rows if p[2]==c]
        if len(tr)<3: continue
        _,eta,t0=fit(tr)
        for (r,e,g,s,l,v) in te:
            pred=1/(s/eta+t0*l); errs.append(abs(pred-v)/v); ins+=(0.75*pred<=v<=1.15*pred); n+=1
    print(eng,'LOCO median',statistics.median(errs),'in range',ins/n, n)
