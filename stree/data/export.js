(function(){
var d=document,root=d.documentElement,nav=d.getElementById('outline');
var items=[].slice.call(nav.querySelectorAll('li.e')),filter='default',query=[],texts=null,links=null;
function byId(h){try{return d.getElementById(decodeURIComponent(h));}catch(e){return null;}}
function openTo(el){for(var p=el;p;p=p.parentElement){if(p.tagName==='DETAILS'){p.open=true;}}}
function shown(i){
var c=items[i].classList;if(c.contains('fh')){return false;}
if(filter==='default'&&c.contains('fs')){return false;}
if(filter==='no-tools'&&(c.contains('fs')||c.contains('ft'))){return false;}
if(filter==='user-only'&&!c.contains('fu')){return false;}
if(filter==='labeled-only'&&!c.contains('fl')){return false;}
if(!query.length){return true;}
var t=texts[i];return query.every(function(q){return t.indexOf(q)>=0;});}
function apply(){var n=0,i;
if(query.length&&!texts){texts=items.map(function(x){var a=byId(x.firstChild.getAttribute('href').slice(1));
return (x.textContent+' '+(a?a.textContent:'')).toLowerCase();});}
for(i=0;i<items.length;i++){var on=shown(i);if(items[i].hidden===on){items[i].hidden=!on;}
if(on){n++;if(query.length){openTo(items[i]);}}}
d.getElementById('status').textContent=n+' / '+items.length+' entries';}
d.querySelectorAll('button[data-filter]').forEach(function(b){b.addEventListener('click',function(){
filter=b.getAttribute('data-filter');d.querySelectorAll('button[data-filter]').forEach(function(x){
x.classList.toggle('on',x===b);});apply();});});
var timer=null;d.getElementById('search').addEventListener('input',function(e){clearTimeout(timer);
timer=setTimeout(function(){query=e.target.value.toLowerCase().split(/\s+/).filter(Boolean);apply();},120);});
function go(){var h=location.hash.slice(1);if(!h){return;}var el=byId(h);if(!el){return;}openTo(el);
var cur=nav.querySelector('a.current');if(cur){cur.classList.remove('current');}
if(!links){links=Object.create(null);nav.querySelectorAll('li.e>a').forEach(function(x){var id=x.getAttribute('href').slice(1);
try{id=decodeURIComponent(id);}catch(e){}links[id]=x;});}
var a=links[el.id];if(a){if(a.parentElement.hidden){a.parentElement.hidden=false;}
openTo(a);a.classList.add('current');a.scrollIntoView({block:'nearest'});}el.scrollIntoView();}
window.addEventListener('hashchange',go);
function all(open){d.querySelectorAll('details.branch, nav li.b>details').forEach(function(x){
var li=x.parentElement;x.open=open||x.classList.contains('active')||(li.tagName==='LI'&&li.classList.contains('active'));});}
d.getElementById('expand-all').addEventListener('click',function(){all(true);});
d.getElementById('collapse-all').addEventListener('click',function(){all(false);go();});
d.getElementById('theme').addEventListener('click',function(){var dark=root.getAttribute('data-theme')==='dark'||
(!root.getAttribute('data-theme')&&matchMedia('(prefers-color-scheme: dark)').matches);
root.setAttribute('data-theme',dark?'light':'dark');});
var closed=[];window.addEventListener('beforeprint',function(){closed=[].slice.call(d.querySelectorAll('main details:not([open])'));
closed.forEach(function(x){x.open=true;});});
window.addEventListener('afterprint',function(){closed.forEach(function(x){x.open=false;});closed=[];});
d.getElementById('print').addEventListener('click',function(){window.print();});
apply();go();
root.setAttribute('data-stree','ready');
})();
