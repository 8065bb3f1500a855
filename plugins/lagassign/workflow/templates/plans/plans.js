// Inlined into each page by page.html (the pages load nothing): follow the Airflow UI's colour mode
// and timezone (same origin: its settings are in localStorage 'theme' and 'timezone'; else the
// system's), open Airflow links in the top window, and bring a triggered run's notice up to date.
//
// Airflow 3 embeds the page in an iframe sandboxed with "allow-scripts allow-same-origin
// allow-forms" and no "allow-top-navigation", so target=_top links do nothing there. The frame
// is same-origin, so a click on such a link moves Airflow's own single-page router
// (history.pushState and a popstate event on the top window, as its router listens to), or,
// should that throw, clicks the same link from the top document.
(function(){
var d=document,w=window;
try{var m=localStorage.getItem('theme');if(m==='dark'||m==='light')d.documentElement.dataset.theme=m}catch(e){}
var tz;try{var v=localStorage.getItem('timezone');if(v){try{tz=JSON.parse(v)}catch(e){tz=v}}}catch(e){}
try{new Intl.DateTimeFormat('en',{timeZone:tz})}catch(e){tz=undefined}
tz=tz||Intl.DateTimeFormat().resolvedOptions().timeZone;
function parts(t){var o={timeZone:tz,hourCycle:'h23',year:'numeric',month:'2-digit',day:'2-digit',hour:'2-digit',
minute:'2-digit',second:'2-digit',timeZoneName:'short'},p={};
new Intl.DateTimeFormat('en-US',o).formatToParts(new Date(t)).forEach(function(x){p[x.type]=x.value});return p}
function show(el){var t=el.getAttribute('datetime')||el.getAttribute('data-t');if(!t)return;var p=parts(t),
f=el.getAttribute('data-f')||'full',day=p.year+'-'+p.month+'-'+p.day,hm=p.hour+':'+p.minute;
el.textContent=f==='hm'?hm:f==='md'?p.month+'-'+p.day:f==='ymd'?day:f==='mdhm'?p.month+'-'+p.day+' '+hm:
day+' '+hm+':'+p.second+' '+p.timeZoneName;if(el.tagName==='time')el.title=t.replace('+00:00',' UTC')}
function times(){d.querySelectorAll('time[datetime],text[data-t]').forEach(show);
d.querySelectorAll('.tzname').forEach(function(el){el.textContent=tz})}
d.addEventListener('DOMContentLoaded',times);
d.addEventListener('click',function(e){var a=e.target.closest&&e.target.closest('a[target=_top]');
if(!a||w.top===w||e.button!==0||e.ctrlKey||e.metaKey||e.shiftKey)return;e.preventDefault();
try{var h=w.top.history,s=h.state||{};h.pushState({usr:null,key:'lagassign',idx:(s.idx||0)+1},'',a.href);
w.top.dispatchEvent(new PopStateEvent('popstate',{state:h.state}))}catch(x){
try{var b=w.top.document.createElement('a');b.href=a.href;w.top.document.body.appendChild(b);b.click();b.remove()}
catch(y){w.location.href=a.href}}});
function poll(n){var u=n.getAttribute('data-status');fetch(u,{headers:{Accept:'application/json'}}).then(function(r){
return r.ok?r.json():null}).then(function(j){if(!j)return;var s=n.querySelector('.state');if(s)s.textContent=j.text;
if(j.done){n.className='notice '+(j.ok?'success':'failed');if(j.plan_href){var a=n.querySelector('.plan-link');
if(a){a.href=j.plan_href;a.textContent=j.plan_text;a.hidden=false}}}else setTimeout(function(){poll(n)},3000)})
.catch(function(){})}
d.addEventListener('DOMContentLoaded',function(){d.querySelectorAll('.notice[data-status]').forEach(poll)});
})();
