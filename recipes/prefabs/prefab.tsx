<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.10" tiledversion="1.10.2" name="prefab" tilewidth="16" tileheight="16" tilecount="6" columns="6">
 <image source="prefab.png" width="96" height="16"/>
 <tile id="0">
  <properties>
   <property name="solid" type="bool" value="true"/>
   <property name="symbol" value="wall"/>
  </properties>
 </tile>
 <tile id="1">
  <properties>
   <property name="symbol" value="floor"/>
  </properties>
 </tile>
 <tile id="2">
  <properties>
   <property name="symbol" value="door"/>
  </properties>
 </tile>
 <tile id="3">
  <properties>
   <property name="color" type="color" value="#ff7e2553"/>
   <property name="symbol" value="carpet"/>
  </properties>
 </tile>
 <tile id="4">
  <properties>
   <property name="color" type="color" value="#ffffa300"/>
   <property name="symbol" value="gold"/>
  </properties>
 </tile>
 <tile id="5">
  <properties>
   <property name="color" type="color" value="#ff83769c"/>
   <property name="symbol" value="rune"/>
  </properties>
 </tile>
</tileset>
