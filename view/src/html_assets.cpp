// The style sheet and the drawing script of the HTML view, kept apart from the C++ that emits data.
//
// The script draws each picture as one SVG string (set once through innerHTML), so a schedule of
// thousands of runnables costs one element per box and no per-box listeners: a single mouseover
// handler per picture looks the box up by its data attributes and fills the tooltip. The bands of
// every iteration per runnable are one path per colour; a click finds its cell from the position.
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
svg .lanebg{fill:#f3f5f8}svg .lanebg.odd{fill:#e9edf3}svg .sochead{fill:#d5dceb}
svg .axis{stroke:#9aa3b2;stroke-width:.5}
svg .period{stroke:#d0021b;stroke-width:1;stroke-dasharray:4 3}
svg .release{stroke:#6b7a99;stroke-width:.7;stroke-dasharray:2 3}
svg .group{stroke:#33415c;stroke-width:.8;cursor:pointer}
svg .node.hit,svg .group.hit{stroke:#d0021b;stroke-width:3}
svg .band-cur{fill:none;stroke:#1d2330;stroke-width:1.5}
table.stats{border-collapse:collapse;background:#fff;font-variant-numeric:tabular-nums}
table.stats th,table.stats td{border:1px solid #d7dbe3;padding:2px 6px;text-align:right}
table.stats th{cursor:pointer;background:#eef1f6}table.stats td:first-child,table.stats th:first-child{text-align:left}
table.stats tr.over td{color:#d0021b}
table.switches tr.miss td{color:#d0021b}
.ctl input[type=text]{width:16em}.ctl button{margin-right:4px}
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
// View state shared by the graph, the bands and the statistics: filter text, search text, grouping.
var V={filter:'',search:'',group:D.run.length>400?'client':'none',open:-1};
function passes(r){return !V.filter||qname(r).toLowerCase().indexOf(V.filter)>=0;}
function groupOf(r){return V.group==='client'?D.run[r][1]:D.run[r][2];}
function groupName(g){return V.group==='client'?D.clients[g]:epochName(g);}
function hits(r){return V.search&&qname(r).toLowerCase().indexOf(V.search)>=0;}
function drawGraphOf(host,shown){
  var n=D.run.length,lvl=new Array(n).fill(-1),byEpoch=D.ep.map(function(){return [];}),on=new Uint8Array(n);
  shown.forEach(function(r){on[r]=1;byEpoch[D.run[r][2]].push(r);});
  function level(r0){ // iterative longest-path depth over the shown runnables; the graph is acyclic (verified)
    var st=[r0];
    while(st.length){var r=st[st.length-1],x=D.run[r],pre=x[5].slice();
      if(x[10]>=0)pre.push(x[10]);
      var ok=true,m=0;
      for(var k=0;k<pre.length;k++){var p=pre[k];if(!on[p])continue;if(lvl[p]<0){ok=false;st.push(p);}else m=Math.max(m,lvl[p]+1);}
      if(ok){lvl[r]=m;st.pop();}
    }
  }
  var compact=shown.length>400,W=compact?10:150,H=compact?8:20,GX=compact?26:56,GY=compact?3:6,maxRows=compact?120:40;
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
      boxes+='<rect class="node'+(violated(r)?' viol':'')+(hits(r)?' hit':'')+'" data-r="'+r+'" x="'+p[0]+'" y="'+p[1]+'" width="'+W+'" height="'+H+'" rx="3" fill="'+color(d[1])+'"'+(d[3]===2?' stroke-dasharray="3 2"':'')+'/>';
      if(!compact)boxes+='<text x="'+(p[0]+4)+'" y="'+(p[1]+14)+'">'+esc((D.clients.length>1?D.clients[d[1]]+'.':'')+d[0]).slice(0,24)+'</text>';
    });
    var ep0=D.ep[e];
    out+='<h3>'+esc(epochName(e))+' <span class="meta">period '+fmt(ep0[2])+(ep0[3]>1?' x '+ep0[3]+' frames':'')+', '+rs.length+' runnables</span></h3>';
    out+='<div class="scroll"><svg class="graph" data-epoch="'+e+'" width="'+w+'" height="'+h+'">'+
      '<path d="'+dep+'" fill="none" stroke="#8a94a6" stroke-width="'+(compact?.4:1)+'"/>'+
      '<path d="'+sub+'" fill="none" stroke="#e07b00" stroke-width="1.5" stroke-dasharray="5 3"/>'+boxes+'</svg></div>';
  });
  host.innerHTML=out||'<div class="meta">no runnable matches the filter</div>';
}
// Collapsed: one box per client (or epoch) in a column, the dependencies between two groups as one
// arc on the right, its width growing with their number (shown on hover).
function drawGroups(host,shown){
  var ng=V.group==='client'?D.clients.length:D.ep.length,count=new Array(ng).fill(0),hit=new Array(ng).fill(0),edges={};
  shown.forEach(function(r){var g=groupOf(r);count[g]++;if(hits(r))hit[g]++;
    D.run[r][5].forEach(function(q){var f=groupOf(q);if(f!==g){var k=f+'>'+g;edges[k]=(edges[k]||0)+1;}});});
  var gs=[];for(var g=0;g<ng;g++)if(count[g])gs.push(g);
  var W=260,H=24,GY=8,y={},s='';
  gs.forEach(function(g,k){y[g]=10+k*(H+GY);});
  var h=20+gs.length*(H+GY),arcs='';
  Object.keys(edges).forEach(function(k){var p=k.split('>'),a=+p[0],b=+p[1];if(y[a]===undefined||y[b]===undefined)return;
    var y1=y[a]+H/2,y2=y[b]+H/2,r=Math.abs(y2-y1)/2+10;
    arcs+='<path class="gedge" d="M'+(10+W)+' '+y1+'A'+r+' '+r+' 0 0 1 '+(10+W)+' '+y2+'" fill="none" stroke="'+(y2>y1?'#8a94a6':'#e07b00')+'" stroke-width="'+Math.min(8,1+Math.log(edges[k])).toFixed(1)+'"><title>'+
      esc(groupName(a))+' &rarr; '+esc(groupName(b))+': '+edges[k]+' dependencies</title></path>';});
  gs.forEach(function(g){
    s+='<rect class="group'+(hit[g]?' hit':'')+'" data-g="'+g+'" x="10" y="'+y[g]+'" width="'+W+'" height="'+H+'" rx="4" fill="'+(V.group==='client'?color(g):'#dfe5ee')+'"/>'+
      '<text x="16" y="'+(y[g]+16)+'">'+esc(groupName(g)).slice(0,28)+' ('+count[g]+(hit[g]?', '+hit[g]+' found':'')+')</text>';});
  var maxR=gs.length*(H+GY)/2+20;
  host.innerHTML='<div class="scroll"><svg class="groups" width="'+(W+40+maxR)+'" height="'+h+'">'+arcs+s+'</svg></div>';
}
function drawGraph(){
  var host=document.getElementById('graph'),shown=[],found=0;
  for(var r=0;r<D.run.length;r++)if(passes(r)&&(V.group==='none'||V.open<0||groupOf(r)===V.open)){shown.push(r);if(hits(r))found++;}
  if(V.group!=='none'&&V.open<0)drawGroups(host,shown);
  else{drawGraphOf(host,shown);
    if(V.open>=0)host.insertAdjacentHTML('afterbegin','<div class="ctl"><button id="graph-back">&larr; all '+(V.group==='client'?'clients':'epochs')+'</button> '+esc(groupName(V.open))+'</div>');}
  document.getElementById('search-count').textContent=V.search?found+' found':'';
  var first=host.querySelector('.hit');if(first&&first.scrollIntoView)first.scrollIntoView({block:'nearest',inline:'nearest'});
}
function graphControls(){
  var c=document.getElementById('graph-ctl');
  c.innerHTML='<label>collapse <select id="group"><option value="none">no</option><option value="client">per client</option><option value="epoch">per epoch</option></select></label>'+
    '<label>filter <input type="text" id="filter" placeholder="part of Client.Runnable"></label>'+
    '<label>search <input type="text" id="search" placeholder="highlight Client.Runnable"></label><span id="search-count" class="meta"></span>';
  var gsel=document.getElementById('group');gsel.value=V.group;
  gsel.addEventListener('change',function(){V.group=gsel.value;V.open=-1;drawGraph();});
  document.getElementById('filter').addEventListener('input',function(e){V.filter=e.target.value.toLowerCase();drawGraph();redrawTables();});
  document.getElementById('search').addEventListener('input',function(e){V.search=e.target.value.toLowerCase();drawGraph();});
  var host=document.getElementById('graph');
  host.addEventListener('click',function(e){var t=e.target;
    if(t.id==='graph-back'){V.open=-1;drawGraph();return;}
    var g=t.getAttribute&&t.getAttribute('data-g');if(g!==null&&g!==undefined){V.open=+g;drawGraph();}});
  hover(host,function(t){if(!t.getAttribute)return '';var r=t.getAttribute('data-r');if(r!==null)return runnableText(+r);
    var g=t.getAttribute('data-g');return g!==null?groupName(+g)+': click to open':'';});
}

// ---- timelines: plan (and execution) as lanes per resource, grouped per SoC ----
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

// The lanes of a hyperepoch as groups: one per SoC of a multi-SoC schedule (its resources in
// the hyperepoch's order, under a heading), else one group without heading; [[soc, [res...]]].
function laneGroups(lanes){
  if(!D.socs.length)return [[-1,lanes]];
  var groups=D.socs.map(function(_,k){return [k,[]];}),none=[];
  lanes.forEach(function(r){var k=D.res[r][4];(k>=0&&k<groups.length?groups[k][1]:none).push(r);});
  groups=groups.filter(function(g){return g[1].length;});
  if(none.length)groups.push([-1,none]);
  return groups;
}
function planSvg(h,zoom,exec){
  var hy=D.hyp[h],groups=laneGroups(hy[2]),LW=150,LH=exec?34:22,HH=18,top=16,period=hy[1],span=period;
  if(exec)exec[3].forEach(function(_,k,a){if(k%4===3)span=Math.max(span,a[k]);});
  var scale=(viewWidth()-LW-50)*zoom/Math.max(1,span),w=LW+span*scale+50,laneY={},y=top,k=0,rows='';
  groups.forEach(function(g){
    if(g[0]>=0){rows+='<g class="soc-group" data-soc="'+g[0]+'"><g class="soc-head" data-soc="'+g[0]+'"><rect class="sochead" x="0" y="'+y+'" width="'+w.toFixed(0)+'" height="'+HH+'"/>'+
      '<text class="lbl" x="4" y="'+(y+13)+'">SoC '+esc(D.socs[g[0]])+' ('+g[1].length+' resources)</text></g>';y+=HH;}
    g[1].forEach(function(r){laneY[r]=y;
      rows+='<g class="lane '+(exec?'exec-lane':'plan-lane')+'" data-res="'+r+'"'+(g[0]>=0?' data-soc="'+g[0]+'"':'')+'><rect class="lanebg'+(k++%2?' odd':'')+'" x="0" y="'+y+'" width="'+w.toFixed(0)+'" height="'+LH+'"/>'+
        '<text class="lbl" x="4" y="'+(y+14)+'">'+esc(resName(r))+'</text></g>';y+=LH;});
    if(g[0]>=0)rows+='</g>';});
  var hgt=y+6;
  var s='<svg class="timeline" data-hyperepoch="'+h+'" width="'+w.toFixed(0)+'" height="'+hgt+'">'+rows;
  s+=timeAxis(LW,scale,span,0,hgt);
  D.ep.forEach(function(ep,e){if(ep[1]!==h)return;for(var f=1;f<ep[3];f++){var x=(LW+f*ep[2]*scale).toFixed(1);
    s+='<line class="release" x1="'+x+'" x2="'+x+'" y1="'+top+'" y2="'+hgt+'"/>';}});
  var px=(LW+period*scale).toFixed(1);s+='<line class="period" x1="'+px+'" x2="'+px+'" y1="0" y2="'+hgt+'"/>';
  var ph=exec?13:LH-4;
  hypInst[h].forEach(function(i){var x=D.inst[i],r=D.run[x[0]];
    x[4].forEach(function(res,k){var y=laneY[res]+2,bx=LW+x[2]*scale,bw=Math.max(1,(x[3]-x[2])*scale);
      s+='<rect class="box'+(k?' sw':'')+(exec?' ghost':'')+'" data-i="'+i+'" data-frame="'+x[1]+'" x="'+bx.toFixed(1)+'" y="'+y+'" width="'+bw.toFixed(1)+'" height="'+ph+'" fill="'+color(r[1])+'"/>';
      if(!exec)s+=boxLabel(bx,y,bw,r[0]+(x[1]?' f'+x[1]:''));});});
  if(exec){var a=exec[3];
    for(var k=0;k<a.length;k+=4){var i=a[k],run=a[k+1],x=D.inst[i];
      x[4].forEach(function(res,j){var y=laneY[res]+17,bx=LW+a[k+2]*scale,bw=Math.max(1,(a[k+3]-a[k+2])*scale);
        var over=run>=0&&(a[k+3]-a[k+2])>D.run[run][4];
        s+='<rect class="run'+(over?' over':'')+(run>=0&&violated(run)?' viol':'')+(j?' sw':'')+'" data-x="'+k+'" x="'+bx.toFixed(1)+'" y="'+y+'" width="'+bw.toFixed(1)+'" height="13" fill="'+(run>=0?color(D.run[run][1]):'#ccc')+'"/>';
        s+=boxLabel(bx,y-1,bw,run>=0?D.run[run][0]:'(empty)');});}
  }
  return s+'</svg>';
}

// Per hyperepoch, the executed iterations (positions in D.it, in iteration order) and the one shown.
var hypIts=D.hyp.map(function(){return [];}),cur=D.hyp.map(function(){return 0;}),lastH=-1,renders=[];
if(D.it)D.it.forEach(function(it,k){hypIts[it[0]].push(k);});
function drawTimelines(host,withExec){
  var out='';
  D.hyp.forEach(function(hy,h){
    var its=withExec?hypIts[h]:null;
    if(withExec&&!its.length)return;
    out+='<h3>'+esc(hy[0])+' <span class="meta">period '+fmt(hy[1])+', '+hy[2].length+' resources, '+hypInst[h].length+' instances</span></h3><div class="ctl">';
    if(withExec){
      out+='<button class="step" data-h="'+h+'" data-d="-1">&#9664; previous</button><button class="step" data-h="'+h+'" data-d="1">next &#9654;</button>'+
        '<label><input type="range" class="itr" min="0" max="'+(its.length-1)+'" value="0" data-h="'+h+'"></label>'+
        '<span class="itlabel" data-h="'+h+'"></span> <label>jump to <select data-h="'+h+'"><option value="">&hellip;</option>';
      its.forEach(function(k,pos){if(D.it[k][2])out+='<option value="'+pos+'">'+D.it[k][1]+' ('+esc(D.it[k][2])+')</option>';});
      out+='</select></label>';
      if(D.itlog>D.it.length)out+=' <span class="meta">'+D.it.length+' of the log\'s '+D.itlog+' iterations drawn (the page\'s run budget)</span>';
    }
    out+=' <label>zoom <input type="range" class="zoom" min="1" max="64" value="1" data-h="'+h+'"></label></div><div class="scroll" data-h="'+h+'"></div>';
  });
  host.innerHTML=out;
  Array.prototype.forEach.call(host.querySelectorAll('div.scroll'),function(div){
    var h=+div.getAttribute('data-h'),zoomEl=host.querySelector('input.zoom[data-h="'+h+'"]');
    var slider=host.querySelector('input.itr[data-h="'+h+'"]'),jump=host.querySelector('select[data-h="'+h+'"]'),label=host.querySelector('.itlabel[data-h="'+h+'"]');
    function render(){
      if(!withExec){div.innerHTML=planSvg(h,+zoomEl.value,null);return;}
      var its=hypIts[h],k=its[cur[h]],it=D.it[k];
      div.innerHTML=planSvg(h,+zoomEl.value,it);
      var svg=div.querySelector('svg');svg.setAttribute('data-iteration',it[1]);svg.setAttribute('data-k',k);
      slider.value=cur[h];label.textContent='iteration '+it[1]+' ('+(cur[h]+1)+' of '+its.length+')'+(it[2]?': '+it[2]:'');
      drawBandCursor(h);
    }
    zoomEl.addEventListener('input',render);
    if(withExec){
      renders[h]=render;
      slider.addEventListener('input',function(){show(h,+slider.value);});
      jump.addEventListener('change',function(){if(jump.value!=='')show(h,+jump.value);jump.value='';});
    }
    render();
    hover(div,function(t){if(!t.getAttribute)return '';var i=t.getAttribute('data-i'),k=t.getAttribute('data-x');
      if(i!==null)return instText(+i);
      if(k!==null&&withExec){var it=D.it[hypIts[h][cur[h]]],a=it[3];k=+k;var inst=D.inst[a[k]],run=a[k+1],dur=a[k+3]-a[k+2];
        var txt=(run>=0?runnableText(run):'(empty round-robin step)')+'\niteration '+it[1]+', frame '+inst[1]+
          '\nran '+fmt(a[k+2])+' .. '+fmt(a[k+3])+' ('+fmt(dur)+')\nplanned '+fmt(inst[2])+' .. '+fmt(inst[3])+', start jitter '+fmt(a[k+2]-inst[2]);
        if(run>=0&&dur>D.run[run][4])txt+='\nOVERRUN: '+fmt(dur-D.run[run][4])+' over WCET';
        return txt;}
      return '';});
  });
  if(withExec)host.addEventListener('click',function(e){var t=e.target;
    if(t.classList&&t.classList.contains('step')){var h=+t.getAttribute('data-h');show(h,cur[h]+ +t.getAttribute('data-d'));}});
}
// Shows position `pos` of hyperepoch h's executed iterations (clamped).
function show(h,pos){var n=hypIts[h].length;if(!n)return;cur[h]=Math.max(0,Math.min(n-1,pos));lastH=h;if(renders[h])renders[h]();}

// ---- bands: every iteration per runnable, its longest run against its WCET ----
var BAND_COLORS=['#dcebdc','#8fd18f','#f2c14e','#d0021b'],bandGeom=[];
function bandRows(h){
  var its=hypIts[h],cell={};
  its.forEach(function(k,col){var a=D.it[k][3];
    for(var j=0;j<a.length;j+=4){var run=a[j+1];if(run<0)continue;
      var q=(a[j+3]-a[j+2])/Math.max(1,D.run[run][4]),row=cell[run]||(cell[run]=new Float32Array(its.length).fill(-1));
      if(q>row[col])row[col]=q;}});
  return cell;
}
var bandCells=null;
function drawBands(){
  var host=document.getElementById('bands'),out='';
  if(!bandCells)bandCells=D.hyp.map(function(_,h){return bandRows(h);});
  D.hyp.forEach(function(hy,h){
    var its=hypIts[h];if(!its.length)return;
    var cell=bandCells[h],rows=Object.keys(cell).map(Number).filter(passes).sort(function(a,b){return a-b;}),more=0;
    if(rows.length>400){more=rows.length-400;rows=rows.slice(0,400);}
    var LW=180,CH=12,cw=Math.max(1,Math.min(14,Math.floor((viewWidth()-LW-20)/its.length))),w=LW+its.length*cw+10,hgt=rows.length*CH+4;
    var paths=['','','',''],labels='';
    rows.forEach(function(r,y){var row=cell[r];
      labels+='<text x="4" y="'+(y*CH+10)+'">'+esc(qname(r)).slice(0,28)+'</text>';
      for(var c=0;c<row.length;c++){var q=row[c];if(q<0)continue;var b=q>1?3:q>0.8?2:q>0.5?1:0;
        paths[b]+='M'+(LW+c*cw)+' '+(y*CH+1)+'h'+cw+'v'+(CH-2)+'h-'+cw+'z';}});
    bandGeom[h]={rows:rows,LW:LW,CH:CH,cw:cw};
    out+='<h3>'+esc(hy[0])+' <span class="meta">'+its.length+' iterations, '+rows.length+' runnables'+(more?' ('+more+' more: filter to see them)':'')+'</span></h3>'+
      '<div class="scroll"><svg class="band" data-h="'+h+'" data-lw="'+LW+'" data-cw="'+cw+'" data-ch="'+CH+'" width="'+w+'" height="'+hgt+'">'+labels+
      paths.map(function(d,b){return d?'<path class="bucket" data-b="'+b+'" d="'+d+'" fill="'+BAND_COLORS[b]+'"/>':'';}).join('')+
      '<rect class="band-cur" x="0" y="0" width="'+cw+'" height="'+hgt+'"/></svg></div>';
  });
  host.innerHTML=out;
  D.hyp.forEach(function(_,h){drawBandCursor(h);});
}
function drawBandCursor(h){
  var svg=document.querySelector('svg.band[data-h="'+h+'"]'),g=bandGeom[h];if(!svg||!g)return;
  svg.querySelector('.band-cur').setAttribute('x',g.LW+cur[h]*g.cw);
}
function bandCell(e){
  var svg=e.target.closest&&e.target.closest('svg.band');if(!svg)return null;
  var h=+svg.getAttribute('data-h'),g=bandGeom[h],box=svg.getBoundingClientRect();
  var col=Math.floor((e.clientX-box.left-g.LW)/g.cw),row=Math.floor((e.clientY-box.top)/g.CH);
  if(col<0||col>=hypIts[h].length||row<0||row>=g.rows.length)return null;
  return {h:h,col:col,r:g.rows[row]};
}

// ---- the statistics table ----
var STAT_COLS=[['runnable'],['runs',0],['WCET',-1],['min',1],['median',2],['p99',3],['max',4],['> WCET',5],['jitter median',7],['jitter p99',8],['jitter max',9]];
var sortCol=0,sortDir=1;
function statValue(r,c){var k=STAT_COLS[c][1];if(c===0)return qname(r);if(k===-1)return D.run[r][4];return D.stats[r][k];}
function drawStats(){
  var host=document.getElementById('stats'),rows=[];
  for(var r=0;r<D.run.length;r++)if(D.stats[r]&&D.stats[r][0]>0&&passes(r))rows.push(r);
  rows.sort(function(a,b){var x=statValue(a,sortCol),y=statValue(b,sortCol);return (x<y?-1:x>y?1:a-b)*sortDir;});
  var more=rows.length>1000?rows.length-1000:0;if(more)rows=rows.slice(0,1000);
  var t='<table class="stats"><tr>'+STAT_COLS.map(function(c,k){return '<th data-c="'+k+'">'+c[0]+(k===sortCol?(sortDir>0?' &#9650;':' &#9660;'):'')+'</th>';}).join('')+'</tr>';
  rows.forEach(function(r){var st=D.stats[r];
    t+='<tr data-r="'+r+'"'+(st[5]>0?' class="over"':'')+'>'+STAT_COLS.map(function(c,k){var v=statValue(r,k);
      return '<td data-v="'+(k?v:'')+'">'+(k===0?esc(v):k===1||k===7?v:fmt(v))+'</td>';}).join('')+'</tr>';});
  host.innerHTML=t+'</table>'+(more?'<div class="meta">'+more+' more rows: filter to see them</div>':'');
}
function redrawTables(){if(D.it&&D.it.length){drawBands();drawStats();}}

function legend(){
  return D.clients.map(function(c,k){return '<span><i style="background:'+color(k)+'"></i>'+esc(c)+'</span>';}).join('')+
    '<span><i style="background:none;border-top:2px dashed #e07b00;height:0"></i>submitter &rarr; submittee</span>'+
    (D.it?'<span><i style="background:#fff;border:2px solid #d0021b"></i>overrun (longer than WCET)</span>':'')+
    (D.stats&&D.stats.some(function(x){return x&&x[6];})?'<span><i style="background:#fff;border:2px dashed #7b1fa2"></i>contract violation (tactus-check)</span>':'');
}

document.getElementById('legend').innerHTML=legend();
graphControls();
drawGraph();
drawTimelines(document.getElementById('plan'),false);
if(D.it&&D.it.length){
  document.getElementById('exec-section').style.display='';
  drawTimelines(document.getElementById('exec'),true);
  redrawTables();
  var bands=document.getElementById('bands');
  bands.addEventListener('click',function(e){var c=bandCell(e);if(c)show(c.h,c.col);});
  bands.addEventListener('mouseleave',hideTip);
  bands.addEventListener('mousemove',function(e){var c=bandCell(e);if(!c){hideTip();return;}
    var q=bandCells[c.h][c.r][c.col];
    showTip(e,qname(c.r)+'\niteration '+D.it[hypIts[c.h][c.col]][1]+(q<0?'\nno run':'\nlongest run: '+(100*q).toFixed(0)+'% of its WCET'));});
  document.getElementById('stats').addEventListener('click',function(e){var c=e.target.getAttribute&&e.target.getAttribute('data-c');
    if(c===null||c===undefined)return;c=+c;if(c===sortCol)sortDir=-sortDir;else{sortCol=c;sortDir=c?-1:1;}drawStats();});
  document.addEventListener('keydown',function(e){
    if(e.target&&(e.target.tagName==='INPUT'||e.target.tagName==='SELECT'))return;
    var h=lastH>=0?lastH:hypIts.findIndex(function(x){return x.length;});if(h<0)return;
    if(e.key==='ArrowRight'){show(h,cur[h]+1);e.preventDefault();}else if(e.key==='ArrowLeft'){show(h,cur[h]-1);e.preventDefault();}});
}
document.documentElement.setAttribute('data-ready','1');
})();
)JS";

}  // namespace tactus::view::detail
