import ast,sys
for f in sys.argv[1:]:
    src=open(f).read()
    tree=ast.parse(src)
    lines=src.split('\n')
    offs=[0]
    for l in lines: offs.append(offs[-1]+len(l)+1)
    edits=[]
    for node in ast.walk(tree):
        if isinstance(node,ast.Call) and isinstance(node.func,ast.Attribute) and node.func.attr in('claim_runs','claim_or_next_due') and node.keywords and not node.args:
            kws={k.arg:ast.get_source_segment(src,k.value) for k in node.keywords}
            if None in kws: print('SKIP',f,node.lineno); continue
            if 'idle' not in kws: kws['idle']='True'
            inner=', '.join(f'{k}={v}' for k,v in kws.items())
            start=offs[node.func.end_lineno-1]+node.func.end_col_offset
            end=offs[node.end_lineno-1]+node.end_col_offset
            edits.append((start,end,f'(ClaimRequest({inner}))'))
    if not edits: continue
    for s,e,t in sorted(edits,reverse=True):
        src=src[:s]+t+src[e:]
    if 'ClaimRequest' not in ''.join(l for l in src.split('\n') if l.startswith(('from','import'))):
        # add import after last tickwork import line
        ls=src.split('\n')
        idx=max(i for i,l in enumerate(ls) if l.startswith('from tickwork') or l.startswith('import '))
        ls.insert(idx+1,'from tickwork._store import ClaimRequest')
        src='\n'.join(ls)
    open(f,'w').write(src); print(f,len(edits))
