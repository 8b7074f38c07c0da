<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.10" tiledversion="1.10.2" name="room" tilewidth="16" tileheight="16" tilecount="4" columns="4">
 <image source="room.png" width="64" height="16"/>
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
   <property name="color" type="color" value="#ff29adff"/>
   <property name="symbol" value="water"/>
  </properties>
 </tile>
</tileset>
