// The style sheet and the drawing script of the HTML view, kept apart from the C++ that emits data.
//
// The script draws each picture as one SVG string (set once through innerHTML), so a schedule of
// thousands of runnables costs one element per box and no per-box listeners: a single mouseover
// handler per picture looks the box up by its data attributes and fills the tooltip.
#include "html_assets.hpp"

namespace tactus::view::detail {

const char* const kStyle = R"CSS(
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:16px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #d7dbe3;padding-bottom:3px}
h3{font-size:14px;margin:14px 0 4px}
.meta{color:#5a6272}.legend span{display:inline-block;margin-right:12px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px;border-radius:2px}
.scroll{overflow:auto;border:1px solid #d7dbe3;background:#fff;max-height:80vh}
.ctl{margin:4px 0 6px}.ctl label{margin-right:14px}
svg text{font-size:11px;fill:#1d2330;pointer-events:none}
svg .lbl{font-weight:600}
svg .box{stroke:#33415c;stroke-width:.5}
svg .box.sw{opacity:.55}
svg .ghost{opacity:.28}
svg .run{stroke:#1b2a49;stroke-width:.5}
svg .run.over{stroke:#d0021b;stroke-width:2}
svg .viol{stroke:#7b1fa2;stroke-width:2.5;stroke-dasharray:4 2}
svg .node{stroke:#33415c;stroke-width:.6}
svg .lanebg{fill:#f3f5f8}svg .lanebg.odd{fill:#e9edf3}
svg .axis{stroke:#9aa3b2;stroke-width:.5}
svg .period{stroke:#d0021b;stroke-width:1;stroke-dasharray:4 3}
svg .release{stroke:#6b7a99;stroke-width:.7;stroke-dasharray:2 3}
#tip{position:fixed;display:none;pointer-events:none;background:#1d2330;color:#fff;padding:6px 8px;border-radius:4px;font-size:12px;white-space:pre;z-index:10;max-width:520px}
)CSS";

const char* const kErrorTrap = R"JS(
(function(){
  var errs=[];
  function note(m){errs.push(String(m));document.documentElement.setAttribute('data-errors',errs.join(' | '));}
  window.onerror=function(m,s,l,c){note(m+' (line '+l+':'+c+')');};
  window.addEventListener('unhandledrejection',function(e){note('unhandled rejection: '+e.reason);});
  var ce=console.error;console.error=function(){note(Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};
})();
)JS";

const char* const kScript = R"JS(
(function(){
'use strict';
var D=JSON.parse(document.getElementById('data').textContent);
var tip=document.getElementById('tip');
var KIND=['cpu','submitter','submittee','round-robin group'];

function fmt(ns){
  var a=Math.abs(ns);
  if(a<1e3)return ns+' ns';
  if(a<1e6)return (ns/1e3).toFixed(a<1e4?2:1)+' us';
  if(a<1e9)return (ns/1e6).toFixed(a<1e7?3:2)+' ms';
  return (ns/1e9).toFixed(3)+' s';
}
function esc(s){return String(s).replace(/[&<>"]/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
function color(c){return 'hsl('+((c*137.508)%360).toFixed(1)+',55%,68%)';}
function qname(r){var x=D.run[r];return D.clients[x[1]]+'.'+x[0];}
function epochName(e){var x=D.ep[e];return D.hyp[x[1]][0]+'.'+x[0];}
function resName(r){var x=D.res[r];return (x[3]>=0?D.clients[x[3]]+'.':'')+x[0];}
function instHyp(i){return D.ep[D.run[D.inst[i][0]][2]][1];}

// Tooltip text for a runnable: its plan and, when measured, its statistics.
function runnableText(r){
  var x=D.run[r],t=qname(r)+'\n'+KIND[x[3]]+' in '+epochName(x[2])+'\nWCET '+fmt(x[4]);
  if(x[8]>0)t+=', StartTime '+fmt(x[8]);
  if(x[7]>=0)t+=', Deadline '+fmt(x[7]);
  if(D.stats&&D.stats[r]&&D.stats[r][0]>0){
    var s=D.stats[r];
    t+='\nmeasured over '+s[0]+' runs: min '+fmt(s[1])+', median '+fmt(s[2])+', p99 '+fmt(s[3])+', max '+fmt(s[4])+'\noverruns (> WCET): '+s[5];
  }
  if(violated(r))t+='\ncontract violations (tactus-check): '+D.stats[r][6];
  return t;
}
// Whether tactus-check found the runnable breaking its contract (allocating, blocking, ...).
function violated(r){return !!(D.stats&&D.stats[r]&&D.stats[r][6]);}
function instText(i){
  var x=D.inst[i],rs=x[4].map(resName).join(', ');
  return runnableText(x[0])+'\nframe '+x[1]+': planned '+fmt(x[2])+' .. '+fmt(x[3])+'\non '+rs;
}
function showTip(e,text){tip.textContent=text;tip.style.display='block';
  var x=e.clientX+14,y=e.clientY+14;if(x+tip.offsetWidth>innerWidth)x=Math.max(0,e.clientX-tip.offsetWidth-8);
  if(y+tip.offsetHeight>innerHeight)y=Math.max(0,e.clientY-tip.offsetHeight-8);tip.style.left=x+'px';tip.style.top=y+'px';}
function hideTip(){tip.style.display='none';}
function hover(el,textOf){
  el.addEventListener('mousemove',function(e){var t=textOf(e.target);if(t)showTip(e,t);else hideTip();});
  el.addEventListener('mouseleave',hideTip);
}
function viewWidth(){return Math.max(600,(document.documentElement.clientWidth||1000)-60);}

// ---- the graph: one column per dependency depth, one section per epoch ----
function drawGraph(host){
  var n=D.run.length,lvl=new Array(n).fill(-1),byEpoch=D.ep.map(function(){return [];});
  for(var r=0;r<n;r++)byEpoch[D.run[r][2]].push(r);
  function level(r0){ // iterative longest-path depth; the graph is acyclic (verified)
    var st=[r0];
    while(st.length){var r=st[st.length-1],x=D.run[r],pre=x[5].slice();
      if(x[10]>=0)pre.push(x[10]);
      var ok=true,m=0;
      for(var k=0;k<pre.length;k++){var p=pre[k];if(lvl[p]<0){ok=false;st.push(p);}else m=Math.max(m,lvl[p]+1);}
      if(ok){lvl[r]=m;st.pop();}
    }
  }
  var compact=n>400,W=compact?10:150,H=compact?8:20,GX=compact?26:56,GY=compact?3:6,maxRows=compact?120:40;
  var out='';
  D.ep.forEach(function(ep,e){
    var rs=byEpoch[e];if(!rs.length)return;
    rs.forEach(function(r){if(lvl[r]<0)level(r);});
    var cols=[];rs.forEach(function(r){(cols[lvl[r]]=cols[lvl[r]]||[]).push(r);});
    var pos={},x=10,maxY=0;
    cols.forEach(function(col){
      if(!col)return;
      col.sort(function(a,b){return D.run[a][1]-D.run[b][1]||a-b;});
      for(var k=0;k<col.length;k++){var sub=Math.floor(k/maxRows),row=k%maxRows;
        pos[col[k]]=[x+sub*(W+GX/2),10+row*(H+GY)];maxY=Math.max(maxY,10+(row+1)*(H+GY));}
      x+=Math.ceil(col.length/maxRows)*(W+GX/2)+GX/2;
    });
    var w=x+10,h=maxY+10,dep='',sub='',boxes='';
    rs.forEach(function(r){var p=pos[r],d=D.run[r];
      d[5].forEach(function(q){var a=pos[q];if(!a)return;var x1=a[0]+W,y1=a[1]+H/2,x2=p[0],y2=p[1]+H/2,mx=(x1+x2)/2;
        dep+='M'+x1+' '+y1+'C'+mx+' '+y1+' '+mx+' '+y2+' '+x2+' '+y2;});
      if(d[6]>=0&&pos[d[6]]){var b=pos[d[6]],x1=p[0]+W,y1=p[1]+H/2,x2=b[0],y2=b[1]+H/2,mx=(x1+x2)/2;
        sub+='M'+x1+' '+y1+'C'+mx+' '+y1+' '+mx+' '+y2+' '+x2+' '+y2;}
      boxes+='<rect class="node'+(violated(r)?' viol':'')+'" data-r="'+r+'" x="'+p[0]+'" y="'+p[1]+'" width="'+W+'" height="'+H+'" rx="3" fill="'+color(d[1])+'"'+(d[3]===2?' stroke-dasharray="3 2"':'')+'/>';
      if(!compact)boxes+='<text x="'+(p[0]+4)+'" y="'+(p[1]+14)+'">'+esc((D.clients.length>1?D.clients[d[1]]+'.':'')+d[0]).slice(0,24)+'</text>';
    });
    var ep0=D.ep[e];
    out+='<h3>'+esc(epochName(e))+' <span class="meta">period '+fmt(ep0[2])+(ep0[3]>1?' x '+ep0[3]+' frames':'')+', '+rs.length+' runnables</span></h3>';
    out+='<div class="scroll"><svg class="graph" data-epoch="'+e+'" width="'+w+'" height="'+h+'">'+
      '<path d="'+dep+'" fill="none" stroke="#8a94a6" stroke-width="'+(compact?.4:1)+'"/>'+
      '<path d="'+sub+'" fill="none" stroke="#e07b00" stroke-width="1.5" stroke-dasharray="5 3"/>'+boxes+'</svg></div>';
  });
  host.innerHTML=out;
  Array.prototype.forEach.call(host.querySelectorAll('svg'),function(s){
    hover(s,function(t){var r=t.getAttribute&&t.getAttribute('data-r');return r===null||r===undefined?'':runnableText(+r);});});
}

// ---- timelines: plan (and execution) as lanes per resource ----
function timeAxis(x0,scale,span,y,h){
  var step=Math.pow(10,Math.floor(Math.log10(Math.max(1,span/8)))),s='';
  if(span/step>16)step*=5;else if(span/step>8)step*=2;
  for(var t=0;t<=span;t+=step){var x=(x0+t*scale).toFixed(1);
    s+='<line class="axis" x1="'+x+'" x2="'+x+'" y1="'+y+'" y2="'+(y+h)+'"/><text x="'+(+x+2)+'" y="'+(y+10)+'">'+fmt(t)+'</text>';}
  return s;
}
function boxLabel(x,y,w,text){return w>46?'<text x="'+(x+3).toFixed(1)+'" y="'+(y+13)+'">'+esc(text).slice(0,Math.floor(w/6.5))+'</text>':'';}

var hypInst=D.hyp.map(function(){return [];});
for(var i=0;i<D.inst.length;i++)hypInst[instHyp(i)].push(i);

function planSvg(h,zoom,exec){
  var hy=D.hyp[h],lanes=hy[2],LW=150,LH=exec?34:22,top=16,period=hy[1],span=period;
  if(exec)exec[3].forEach(function(_,k,a){if(k%4===3)span=Math.max(span,a[k]);});
  var scale=(viewWidth()-LW-50)*zoom/Math.max(1,span),w=LW+span*scale+50,hgt=top+lanes.length*LH+6;
  var laneOf={};lanes.forEach(function(r,k){laneOf[r]=k;});
  var s='<svg class="timeline" data-hyperepoch="'+h+'" width="'+w.toFixed(0)+'" height="'+hgt+'">';
  lanes.forEach(function(r,k){var y=top+k*LH;
    s+='<g class="lane '+(exec?'exec-lane':'plan-lane')+'" data-res="'+r+'"><rect class="lanebg'+(k%2?' odd':'')+'" x="0" y="'+y+'" width="'+w.toFixed(0)+'" height="'+LH+'"/>'+
       '<text class="lbl" x="4" y="'+(y+14)+'">'+esc(resName(r))+'</text></g>';});
  s+=timeAxis(LW,scale,span,0,hgt);
  D.ep.forEach(function(ep,e){if(ep[1]!==h)return;for(var f=1;f<ep[3];f++){var x=(LW+f*ep[2]*scale).toFixed(1);
    s+='<line class="release" x1="'+x+'" x2="'+x+'" y1="'+top+'" y2="'+hgt+'"/>';}});
  var px=(LW+period*scale).toFixed(1);s+='<line class="period" x1="'+px+'" x2="'+px+'" y1="0" y2="'+hgt+'"/>';
  var ph=exec?13:LH-4;
  hypInst[h].forEach(function(i){var x=D.inst[i],r=D.run[x[0]];
    x[4].forEach(function(res,k){var y=top+laneOf[res]*LH+2,bx=LW+x[2]*scale,bw=Math.max(1,(x[3]-x[2])*scale);
      s+='<rect class="box'+(k?' sw':'')+(exec?' ghost':'')+'" data-i="'+i+'" data-frame="'+x[1]+'" x="'+bx.toFixed(1)+'" y="'+y+'" width="'+bw.toFixed(1)+'" height="'+ph+'" fill="'+color(r[1])+'"/>';
      if(!exec)s+=boxLabel(bx,y,bw,r[0]+(x[1]?' f'+x[1]:''));});});
  if(exec){var a=exec[3];
    for(var k=0;k<a.length;k+=4){var i=a[k],run=a[k+1],x=D.inst[i];
      x[4].forEach(function(res,j){var y=top+laneOf[res]*LH+17,bx=LW+a[k+2]*scale,bw=Math.max(1,(a[k+3]-a[k+2])*scale);
        var over=run>=0&&(a[k+3]-a[k+2])>D.run[run][4];
        s+='<rect class="run'+(over?' over':'')+(run>=0&&violated(run)?' viol':'')+(j?' sw':'')+'" data-x="'+k+'" x="'+bx.toFixed(1)+'" y="'+y+'" width="'+bw.toFixed(1)+'" height="13" fill="'+(run>=0?color(D.run[run][1]):'#ccc')+'"/>';
        s+=boxLabel(bx,y-1,bw,run>=0?D.run[run][0]:'(empty)');});}
  }
  return s+'</svg>';
}

function drawTimelines(host,withExec){
  var out='';
  D.hyp.forEach(function(hy,h){
    var its=withExec?D.it.map(function(it,k){return k;}).filter(function(k){return D.it[k][0]===h;}):null;
    if(withExec&&!its.length)return;
    out+='<h3>'+esc(hy[0])+' <span class="meta">period '+fmt(hy[1])+', '+hy[2].length+' resources, '+hypInst[h].length+' instances</span></h3><div class="ctl">';
    if(withExec){out+='<label>iteration <select data-h="'+h+'">';
      its.forEach(function(k){out+='<option value="'+k+'">'+D.it[k][1]+(D.it[k][2]?' ('+esc(D.it[k][2])+')':'')+'</option>';});
      out+='</select></label>';}
    out+='<label>zoom <input type="range" min="1" max="64" value="1" data-h="'+h+'"></label></div><div class="scroll" data-h="'+h+'"></div>';
  });
  host.innerHTML=out;
  Array.prototype.forEach.call(host.querySelectorAll('div.scroll'),function(div){
    var h=+div.getAttribute('data-h'),zoomEl=host.querySelector('input[data-h="'+h+'"]'),sel=host.querySelector('select[data-h="'+h+'"]');
    function render(){div.innerHTML=planSvg(h,+zoomEl.value,withExec?D.it[+sel.value]:null);}
    zoomEl.addEventListener('input',render);if(sel)sel.addEventListener('change',render);render();
    hover(div,function(t){if(!t.getAttribute)return '';var i=t.getAttribute('data-i'),k=t.getAttribute('data-x');
      if(i!==null)return instText(+i);
      if(k!==null&&sel){var it=D.it[+sel.value],a=it[3];k=+k;var inst=D.inst[a[k]],run=a[k+1],dur=a[k+3]-a[k+2];
        var txt=(run>=0?runnableText(run):'(empty round-robin step)')+'\niteration '+it[1]+', frame '+inst[1]+
          '\nran '+fmt(a[k+2])+' .. '+fmt(a[k+3])+' ('+fmt(dur)+')\nplanned '+fmt(inst[2])+' .. '+fmt(inst[3])+', start jitter '+fmt(a[k+2]-inst[2]);
        if(run>=0&&dur>D.run[run][4])txt+='\nOVERRUN: '+fmt(dur-D.run[run][4])+' over WCET';
        return txt;}
      return '';});
  });
}

function legend(){
  return D.clients.map(function(c,k){return '<span><i style="background:'+color(k)+'"></i>'+esc(c)+'</span>';}).join('')+
    '<span><i style="background:none;border-top:2px dashed #e07b00;height:0"></i>submitter &rarr; submittee</span>'+
    (D.it?'<span><i style="background:#fff;border:2px solid #d0021b"></i>overrun (longer than WCET)</span>':'')+
    (D.stats&&D.stats.some(function(x){return x&&x[6];})?'<span><i style="background:#fff;border:2px dashed #7b1fa2"></i>contract violation (tactus-check)</span>':'');
}

document.getElementById('legend').innerHTML=legend();
drawGraph(document.getElementById('graph'));
drawTimelines(document.getElementById('plan'),false);
if(D.it&&D.it.length){document.getElementById('exec-section').style.display='';drawTimelines(document.getElementById('exec'),true);}
document.documentElement.setAttribute('data-ready','1');
})();
)JS";

}  // namespace tactus::view::detail
