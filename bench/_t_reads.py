import time, json
from bench import reads
t=time.time()
r = reads.measure((1000,))
r10 = r[1000]
print(time.time()-t)
for k in ("list_7d","list_93d","list_93d_next"):
    v = r10[k]; print(k, v and {x: v[x] for x in ("ddb_calls","ops","bytes_read","items_read")})
for d in r10["detail"][:3]: print("detail", d["ddb_calls"], d["ops"], d["bytes_read"])
for t in r10["ticks"]: print("tick", t["ddb_calls"], t["ops"])
