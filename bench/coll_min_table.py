#!/usr/bin/env python3
"""Markdown table of bench/coll_compare.sh JSON lines, each cell the minimum over the runs
(on a shared, loaded machine the minimum is the least disturbed run).

usage: bench/coll_min_table.py LABEL=FILE.jsonl ...
RailMPI's lines of each file get that file's LABEL (e.g. railmpi=on.jsonl
railmpi-shm0=off.jsonl, the second run with RMPI_COLL_SHM=0); MPICH's and Open MPI's keep
their names. The ratio column is the first label against the best reference MPI."""
import collections
import json
import sys

cols=[];d=collections.defaultdict(dict);meta=[]
for a in sys.argv[1:]:
    lab,f=a.split('=',1)
    for l in open(f):
        j=json.loads(l)
        if 'meta' in j: meta.append((lab,j['loadavg'],j['busy_pct'])); continue
        if 'lat_us' not in j: continue
        name=j['mpi'] if j['mpi']!='railmpi' else lab
        if name not in cols: cols.append(name)
        k=(j['coll'],j['size'])
        d[k][name]=min(d[k].get(name,1e18),j['lat_us'])
print('loads:',meta)
rail=[c for c in cols if c.startswith('railmpi')]; refs=[c for c in cols if c not in rail]
print('| collective | bytes | '+' | '.join(rail+refs)+' | %s/best |'%rail[0])
print('|---|---:|'+'---:|'*(len(cols)+1))
for k in d:
    best=min(d[k][r] for r in refs if r in d[k]) if any(r in d[k] for r in refs) else None
    row=[('%.2f'%d[k][c]) if c in d[k] else '-' for c in rail+refs]
    ratio='%.2f'%(d[k][rail[0]]/best) if best else '-'
    print('| %s | %d | %s | %s |'%(k[0],k[1],' | '.join(row),ratio))
