import re,sys
parts={
 'runs':'insert_run get_run list_runs recent_runs list_steps claim_runs claim_or_next_due renew_leases record_step finish_run reschedule_run cancel_run release_leases next_due_ms',
 'schedules':'upsert_schedule upsert_schedules get_schedule list_schedules schedule_keys get_schedule_record delete_schedule set_schedule_state change_schedule_state schedule_history',
 'firing':'next_firing_due_ms fire_due trigger_schedule backfill_schedule next_schedule_due_ms',
 'deadlines':'record_missed_deadlines next_deadline_ms recent_deadline_misses',
 'keys':'create_api_key api_key_hash list_api_keys revoke_api_key',
 'calendars':'put_calendar get_calendar list_calendars delete_calendar calendar_stamps store_calendar_year calendar_year',
 'workers':'renew_worker stop_worker list_workers',
 'pruning':'prune_batch',
 'storage':'storage_stats',
 'events':'emit_event wait_run flush_due next_flush_ms upsert_subscriptions delete_subscription list_subscriptions get_event list_events emit_counts subscription_history prune_events',
}
m={n:p for p,ns in parts.items() for n in ns.split()}
# receivers: identifiers ending in "store" (store, _store, self._store, runtime.store, store_a, ...)
pat=re.compile(r'(\b[\w\.\]\)]*?(?:store|store_[ab]|_store))\.(' + '|'.join(sorted(m,key=len,reverse=True)) + r')\(')
def sub(mo):
    recv,name=mo.group(1),mo.group(2)
    part=m[name]
    new='emit' if name=='emit_event' else name
    return f'{recv}.{part}.{new}('
for f in sys.argv[1:]:
    s=open(f).read()
    t=pat.sub(sub,s)
    if t!=s:
        open(f,'w').write(t); print(f, len(pat.findall(s)))
